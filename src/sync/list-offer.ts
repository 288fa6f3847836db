import { DsyncError } from '../errors.js'
import { LIMITS, type FileEntry, type Message } from '../net/index.js'
import { TreeSummary } from './tree-summary.js'

/**
 * The sender's file list. Whole, in `files` messages and then `filesEnd`; or, to a receiver of
 * version 4, offered by directory summary (PROTOCOL.md §4.9): the root's summary first; each
 * directory the receiver finds different is listed (its entries) with its subdirectories
 * offered by summary in turn, level by level, until the receiver wants none. A no-op of
 * 100,000 files costs one summary and one empty answer instead of the whole list (513 KB); a
 * change costs the listings of the directories on its path, one round trip a level.
 */
export class ListOffer {
  /** directories offered whose answer has not come */
  readonly #offered = new Set<string>()
  /** `summary` messages not yet answered: the list is complete when none are */
  #unanswered = 0

  private constructor(
    /** the list, whole; or the summaries it is offered by */
    private readonly list: readonly FileEntry[] | TreeSummary,
    private readonly post: (m: Message) => void,
  ) {}

  /** The list sent whole. */
  static whole(entries: readonly FileEntry[], post: (m: Message) => void): ListOffer {
    return new ListOffer(entries, post)
  }

  /** The list offered by the summaries of a tree: its entries, read from it as asked for. */
  static bySummary(summary: TreeSummary, post: (m: Message) => void): ListOffer {
    return new ListOffer(summary, post)
  }

  /** Sends the whole list, or offers the root. */
  start(): void {
    if (this.list instanceof TreeSummary) return this.#offer([''])
    this.#list(this.list)
    this.post({ t: 'filesEnd' })
  }

  /** The receiver's answer to one `summary`: lists what it wants, offers their subdirectories,
   *  and ends the list (`filesEnd`) once every summary is answered. */
  answer(paths: readonly string[]): void {
    if (this.#unanswered === 0) throw new DsyncError('BAD_MESSAGE', 'summaryWant with no summary to answer')
    this.#unanswered--
    const summary = this.list as TreeSummary // a summary was offered: unanswered > 0
    const listed: FileEntry[] = []
    const next: string[] = []
    for (const dir of paths) {
      // Each directory once, and only one offered: a receiver cannot make the sender list
      // anything twice, nor walk it through its tree.
      if (!this.#offered.delete(dir)) throw new DsyncError('BAD_MESSAGE', `summaryWant for ${dir === '' ? 'the root' : dir}, not offered or asked for already`)
      for (const e of summary.children(dir)) {
        listed.push(e as FileEntry)
        // An empty directory needs no summary: listed, it has nothing under it.
        if (e.kind === 'dir' && !summary.empty(e.path)) next.push(e.path)
      }
    }
    this.#list(listed)
    if (next.length > 0) this.#offer(next)
    if (this.#unanswered === 0) this.post({ t: 'filesEnd' })
  }

  /** `entries` in `files` messages of at most LIMITS.maxFilesPerMessage. */
  #list(entries: readonly FileEntry[]): void {
    for (let i = 0; i < entries.length; i += LIMITS.maxFilesPerMessage) this.post({ t: 'files', entries: entries.slice(i, i + LIMITS.maxFilesPerMessage) })
  }

  #offer(dirs: readonly string[]): void {
    for (let i = 0; i < dirs.length; i += LIMITS.maxFilesPerMessage) {
      const part = dirs.slice(i, i + LIMITS.maxFilesPerMessage)
      for (const d of part) this.#offered.add(d)
      const summary = this.list as TreeSummary // offered only by summary
      this.post({ t: 'summary', dirs: part.map((path) => ({ path, hash: summary.hash(path)! })) })
      this.#unanswered++
    }
  }
}
