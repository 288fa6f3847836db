import { DsyncError } from '../errors.js'
import { LIMITS, type FileEntry, type Message } from '../net/index.js'
import { TreeSummary } from './tree-summary.js'

/**
 * The sender's file list, offered by directory summary (PROTOCOL.md §4.9, version 4): the root's
 * summary first; each directory the receiver finds different is listed (its entries) with its
 * subdirectories offered by summary in turn, level by level, until the receiver wants none.
 * A no-op of 100,000 files costs one summary and one empty answer instead of the whole list
 * (513 KB); a change costs the listings of the directories on its path, one round trip a level.
 */
export class ListOffer {
  readonly #summary: TreeSummary
  /** directories offered whose answer has not come */
  readonly #offered = new Set<string>()
  /** `summary` messages not yet answered: the list is complete when none are */
  #unanswered = 0

  constructor(
    entries: readonly FileEntry[],
    private readonly post: (m: Message) => void,
  ) {
    this.#summary = TreeSummary.of(entries)
  }

  /** Offers the root. */
  start(): void {
    this.#offer([''])
  }

  /** The receiver's answer to one `summary`: lists what it wants, offers their subdirectories,
   *  and ends the list (`filesEnd`) once every summary is answered. */
  answer(paths: readonly string[]): void {
    if (this.#unanswered === 0) throw new DsyncError('BAD_MESSAGE', 'summaryWant with no summary to answer')
    this.#unanswered--
    const listed: FileEntry[] = []
    const next: string[] = []
    for (const dir of paths) {
      // Each directory once, and only one offered: a receiver cannot make the sender list
      // anything twice, nor walk it through its tree.
      if (!this.#offered.delete(dir)) throw new DsyncError('BAD_MESSAGE', `summaryWant for ${dir === '' ? 'the root' : dir}, not offered or asked for already`)
      for (const e of this.#summary.children(dir)) {
        listed.push(e as FileEntry)
        // An empty directory needs no summary: listed, it has nothing under it.
        if (e.kind === 'dir' && this.#summary.children(e.path).length > 0) next.push(e.path)
      }
    }
    for (let i = 0; i < listed.length; i += LIMITS.maxFilesPerMessage) this.post({ t: 'files', entries: listed.slice(i, i + LIMITS.maxFilesPerMessage) })
    if (next.length > 0) this.#offer(next)
    if (this.#unanswered === 0) this.post({ t: 'filesEnd' })
  }

  #offer(dirs: readonly string[]): void {
    for (let i = 0; i < dirs.length; i += LIMITS.maxFilesPerMessage) {
      const part = dirs.slice(i, i + LIMITS.maxFilesPerMessage)
      for (const d of part) this.#offered.add(d)
      this.post({ t: 'summary', dirs: part.map((path) => ({ path, hash: this.#summary.hash(path)! })) })
      this.#unanswered++
    }
  }
}
