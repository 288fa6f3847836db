/**
 * What a sync did, file by file, as data. The CLI formats it (src/cli/output.ts); --json prints
 * it. Every decision carries the seed and the similarity, so a user can see why bytes were sent.
 */
export type Action =
  | 'new' // whole file, no seed worth using
  | 'delta' // delta against `seed`
  | 'whole' // replaced whole: the best seed was below the threshold
  | 'copy' // identical content already on the receiver at `seed`: copied locally, no data sent
  | 'unchanged'
  | 'meta' // content equal, mode or mtime updated
  | 'dir' // directory created
  | 'symlink' // symlink created or retargeted
  | 'deleted'
  | 'moved' // renamed from `seed`: a file the sender moved (push or pull with --delete), a rename made on the other side (two-way sync), or a conflict copy
  | 'conflict' // both sides changed: the receiver's version kept as `conflictCopy`, sender's written
  | 'kept' // changed on the receiver only: not overwritten (pull to get it)
  | 'error'

export interface FileEvent {
  readonly path: string
  readonly action: Action
  readonly seed?: string
  readonly similarity?: number
  /** the file's size in bytes */
  readonly size?: number
  /** bytes taken from the seed / sent as literals (delta and whole only, when known) */
  readonly copiedBytes?: number
  readonly literalBytes?: number
  readonly conflictCopy?: string
  /** the seeds weighed for a delta or whole file, best first (at most 3), each with its
   *  similarity by the session's metric (`-vv`) */
  readonly candidates?: readonly { readonly path: string; readonly similarity: number }[]
  readonly code?: string
  readonly message?: string
  /** (two-way sync) the side the action happened on: `remote` (sent there, or done there) or `local` */
  readonly side?: 'local' | 'remote'
}

export interface SyncSummary {
  readonly files: number
  readonly transferred: number
  readonly copied: number
  /** files of the list renamed on the receiver from a path the sender no longer has (--delete:
   *  PROTOCOL.md §4.14); a two-way sync's renames are in its plan, not among its files */
  readonly moved: number
  readonly unchanged: number
  readonly deleted: number
  readonly conflicts: number
  readonly errors: number
  /** total size of the sender's files */
  readonly totalBytes: number
  /** bytes of transferred files that came from seeds on the receiver */
  readonly matchedBytes: number
  /** bytes of transferred files sent as literals (before compression) */
  readonly literalBytes: number
  readonly wireBytesSent: number
  readonly wireBytesReceived: number
  /** totalBytes ÷ (wire bytes both ways), as rsync reports it */
  readonly speedup: number
  readonly durationMs: number
  /** files whose contents this side read to scan its tree (0 on a no-op: size+mtime matched) */
  readonly filesRead: number
}

const TRANSFER: ReadonlySet<Action> = new Set(['new', 'delta', 'whole'])

/**
 * Which events a report keeps in `events`; every event is counted for the summary and given to
 * onEvent whichever it is. `all`; `changed`: all but `unchanged` (a no-op of 1,000,000 files
 * kept a million); `exceptions`: only those a run must answer for by name (`error`, `kept`,
 * `conflict`, `deleted`): a server needs no more of them (PeerBases.record), nor a command
 * line that printed each as it came, and a first push of 200,000 files kept an event a file on
 * both sides to the end. `moved` too: its old path is gone as a deleted one is.
 */
export type KeptEvents = 'all' | 'changed' | 'exceptions'

const EXCEPTIONS: ReadonlySet<Action> = new Set(['error', 'kept', 'conflict', 'deleted', 'moved'])

/** Collects file events during a run and sums them up at the end. */
export class SyncReport {
  /** the events kept (see KeptEvents), in the order they came */
  readonly events: FileEvent[] = []
  /** events of each action, kept or not */
  readonly #counts = new Map<Action, number>()
  /** unchanged files counted with no event (countUnchanged) */
  #unchanged = 0
  #matchedBytes = 0
  #literalBytes = 0
  #totalBytes = 0
  #settledBytes = 0
  #files = 0
  #filesRead = 0
  /** 'moved' events of listed files (with no side: a two-way sync's renames have one) */
  #moved = 0

  /**
   * @param onEvent called with each file event as it happens (itemized output)
   * @param onProgress called with bytes of files settled so far and bytes of all files listed
   *   so far, whenever either grows (progress bars)
   * @param keep which events to keep in `events` (KeptEvents); all are counted
   */
  constructor(
    private readonly onEvent?: (e: FileEvent) => void,
    private readonly onProgress: (settledBytes: number, totalBytes: number) => void = () => {},
    private readonly keep: KeptEvents = 'all',
  ) {}

  /** Whether an `unchanged` file needs its own event (kept, or given to onEvent), or may be
   *  counted with others (countUnchanged). */
  get wantsEachUnchanged(): boolean {
    return this.keep === 'all' || this.onEvent !== undefined
  }

  /** Counts `files` unchanged files of `bytes` in all with no event each (!wantsEachUnchanged:
   *  the files of a directory summary found the same, the sender's unreported ones). */
  countUnchanged(files: number, bytes: number): void {
    if (files === 0) return
    this.#unchanged += files
    this.#settledBytes += bytes
    this.onProgress(this.#settledBytes, this.#totalBytes)
  }

  /** Counts regular files of the sender's list, `bytes` in all (for totals). */
  countFiles(files: number, bytes: number): void {
    this.#files += files
    this.#totalBytes += bytes
    this.onProgress(this.#settledBytes, this.#totalBytes)
  }

  /** Notes how many files the local scan had to read. */
  countScan(filesRead: number): void {
    this.#filesRead += filesRead
  }

  add(e: FileEvent): void {
    this.#counts.set(e.action, (this.#counts.get(e.action) ?? 0) + 1)
    if (e.action === 'moved' && e.side === undefined) this.#moved++
    if (TRANSFER.has(e.action)) {
      this.#matchedBytes += e.copiedBytes ?? 0
      this.#literalBytes += e.literalBytes ?? 0
    }
    if (this.keep === 'all' || (this.keep === 'changed' ? e.action !== 'unchanged' : EXCEPTIONS.has(e.action))) this.events.push(e)
    this.onEvent?.(e)
    if (e.size !== undefined) {
      this.#settledBytes += e.size
      this.onProgress(this.#settledBytes, this.#totalBytes)
    }
  }

  summary(wire: { bytesSent: number; bytesReceived: number }, durationMs: number): SyncSummary {
    const count = (...actions: Action[]): number => actions.reduce((n, a) => n + (this.#counts.get(a) ?? 0), 0)
    const onWire = wire.bytesSent + wire.bytesReceived
    return {
      files: this.#files,
      transferred: count(...TRANSFER),
      copied: count('copy'),
      moved: this.#moved,
      unchanged: this.#unchanged + count('unchanged', 'meta'),
      deleted: count('deleted'),
      conflicts: count('conflict', 'kept'),
      errors: count('error'),
      totalBytes: this.#totalBytes,
      matchedBytes: this.#matchedBytes,
      literalBytes: this.#literalBytes,
      wireBytesSent: wire.bytesSent,
      wireBytesReceived: wire.bytesReceived,
      speedup: onWire === 0 ? 0 : this.#totalBytes / onWire,
      durationMs,
      filesRead: this.#filesRead,
    }
  }
}
