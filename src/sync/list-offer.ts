import { DsyncError } from '../errors.js'
import { Fifo, LIMITS, type FileEntry, type Message } from '../net/index.js'
import { TreeSummary } from './tree-summary.js'

/** What the offer has to send, in order: entries to list, directories to offer. */
type Pending = { readonly entries: readonly FileEntry[]; from: number } | { readonly offer: readonly string[] }

/**
 * The sender's file list. Whole, in `files` messages and then `filesEnd`; or, to a receiver of
 * version 4, offered by directory summary (PROTOCOL.md §4.9): the root's summary first; each
 * directory the receiver finds different is listed (its entries) with its subdirectories
 * offered by summary in turn, level by level, until the receiver wants none. A no-op of
 * 100,000 files costs one summary and one empty answer instead of the whole list (513 KB); a
 * change costs the listings of the directories on its path, one round trip a level.
 *
 * To a receiver of version 10 the entries go at most `window` ahead of what it has taken in,
 * and on as its `listRoom` allows (§4.13); what waits for room waits here, in order, as
 * positions in lists this side holds anyway. A receiver held every listed file it had not yet
 * asked for: a first push of 200,000 small files peaked at 785 MiB on the server.
 */
export class ListOffer {
  /** directories offered whose answer has not come */
  readonly #offered = new Set<string>()
  /** `summary` messages not yet answered: the list is complete when none are */
  #unanswered = 0
  readonly #pending = new Fifo<Pending>()
  /** entries sent in `files` so far, and how many the receiver allows (§4.13) */
  #sent = 0
  #allowed: number
  #ended = false

  private constructor(
    /** the list, whole; or the summaries it is offered by */
    private readonly list: readonly FileEntry[] | TreeSummary,
    private readonly post: (m: Message) => void,
    window: number | undefined,
  ) {
    this.#allowed = window ?? Infinity
  }

  /** The list sent whole; `window`: entries it may go ahead of the receiver (§4.13), or
   *  undefined for a receiver that predates version 10. */
  static whole(entries: readonly FileEntry[], post: (m: Message) => void, window?: number): ListOffer {
    return new ListOffer(entries, post, window)
  }

  /** The list offered by the summaries of a tree: its entries, read from it as asked for. */
  static bySummary(summary: TreeSummary, post: (m: Message) => void, window?: number): ListOffer {
    return new ListOffer(summary, post, window)
  }

  /** Sends the whole list, or offers the root. */
  start(): void {
    this.#pending.push(this.list instanceof TreeSummary ? { offer: [''] } : { entries: this.list, from: 0 })
    this.#flush()
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
    if (listed.length > 0) this.#pending.push({ entries: listed, from: 0 })
    if (next.length > 0) this.#pending.push({ offer: next })
    this.#flush()
  }

  /** The receiver's `listRoom` (§4.13): it allows `upTo` entries in all. */
  room(upTo: number): void {
    if (upTo <= this.#allowed) return
    this.#allowed = upTo
    this.#flush()
  }

  /** Sends what is pending, in order, until the entries reach what the receiver allows; then
   *  `filesEnd`, once nothing is pending and no summary is unanswered. */
  #flush(): void {
    for (let p = this.#pending.peek(); p !== undefined; p = this.#pending.peek()) {
      if ('offer' in p) this.#offer(p.offer)
      while ('entries' in p && p.from < p.entries.length) {
        const n = Math.min(LIMITS.maxFilesPerMessage, p.entries.length - p.from, this.#allowed - this.#sent)
        if (n <= 0) return
        this.post({ t: 'files', entries: p.entries.slice(p.from, p.from + n) })
        p.from += n
        this.#sent += n
      }
      this.#pending.shift()
    }
    if (this.#unanswered > 0 || this.#ended) return
    this.#ended = true
    this.post({ t: 'filesEnd' })
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
