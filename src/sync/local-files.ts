import { type ChunkParams, type Cutter, cutterFor } from '../chunk/index.js'
import type { DsyncError } from '../errors.js'
import { CheckedDirs, type TreeEntry, TreeListing } from '../fs/index.js'
import { type FileRecord, readRecord, type ReadResult, type Store } from '../store/index.js'
import { Semaphore } from './limit.js'

/**
 * Files read at once for their content. Reads of small files are mostly waits on libuv's thread
 * pool; a few in flight overlap them. On this 2-core machine (shared, load ~8), 2,000 files of
 * 200 B: 1 in flight 1.58 s, 4 in flight 1.34 s (median of 2 runs each). Memory: a large file
 * streams through 5 MiB of buffers, so 4 reads hold at most 20 MiB.
 */
const READS_IN_FLIGHT = 4

/**
 * Content of small files kept between their read (for the chunk list) and their sending, when
 * `keepContent`: the file is then read once, and what is sent is exactly what the chunk list
 * and digest describe. Bounded: past this many bytes the oldest go, and are read again if sent.
 */
const KEPT_CONTENT_BYTES = 32 * 1024 * 1024

/**
 * One side's tree in a session: the walk's entries (path, kind, size, mtime, mode), and each
 * file's content (digest and chunks) read only when something needs it, once, and kept in the
 * store for the next session.
 *
 * This is what makes a first sync a quick check: two trees that already match are compared by
 * size and mtime and no file is read (issue 8: the old scan read both whole trees first, 19 s
 * for two identical 20,000-file trees where rsync takes 0.19 s). A file the peer asks for is
 * read when asked; the receiver reads the file at the same path when it is the seed, and the
 * rest of its tree (`indexAll`, for seeds found by content elsewhere) only when a file needs a
 * seed that the path alone does not give.
 */
export class LocalFiles {
  /** what the walk found, as it found it (columns: ~25 bytes a file) */
  #walk!: TreeListing
  /** what this session changed since: an entry written or made, or null for one removed */
  readonly #changed = new Map<string, TreeEntry | null>()
  /** paths of #changed the walk did not find (made by the session), in the order made */
  readonly #added = new Set<string>()
  readonly #reads = new Map<string, Promise<FileRecord | undefined>>()
  readonly #slots: Semaphore
  readonly #cutter: Cutter
  #indexed: Promise<void> | undefined
  /** file paths by size, built when first needed (#sizeIndex) and kept current by set and delete */
  #bySize: Map<number, Set<string>> | undefined
  /** the sizes of the walk's files, when first asked (walkHadFileOfSize) */
  #walkSizes: Set<number> | undefined
  /** indexSize's pass per size, once a session: a first push of 20,000 new files looked at
   *  every entry for each (10.5 of the receiver's 30 CPU s) */
  readonly #sizesIndexed = new Map<number, Promise<void>>()
  /** indexFrom's passes, by the power of two below their size */
  readonly #fromIndexed = new Map<number, Promise<void>>()
  /** --checksum: records are not trusted by size and mtime; each file is read once a session */
  readonly #readAll: boolean
  readonly #readNow = new Set<string>()
  /** records read this session whose store write has not yet committed: known meanwhile */
  readonly #storing = new Map<string, FileRecord>()
  /** records being stored; a failure is kept for `flush` */
  readonly #puts = new Set<Promise<void>>()
  #putError: { err: unknown } | undefined
  readonly #keepContent: boolean
  /** path → content read, oldest first (Map order); see KEPT_CONTENT_BYTES */
  readonly #kept = new Map<string, Uint8Array>()
  #keptBytes = 0
  filesRead = 0
  bytesRead = 0
  /** The tree's folders known to be real directories this session (CheckedDirs): every read of
   *  a file checks the folders above it once, as every write of the receiver does. */
  readonly dirs: CheckedDirs

  private constructor(
    root: string,
    private readonly store: Store,
    private readonly params: ChunkParams,
    private readonly signal: AbortSignal,
    private readonly onError: ((err: DsyncError) => void) | undefined,
    checksum: boolean,
    keepContent: boolean,
  ) {
    this.#readAll = checksum
    this.dirs = new CheckedDirs(root)
    this.#keepContent = keepContent
    this.#slots = new Semaphore(READS_IN_FLIGHT, signal)
    this.#cutter = cutterFor(params)
  }

  /**
   * Walks `root` (metadata only: no file is read) and forgets the store's records of files that
   * are gone or now excluded. Per-entry failures go to `onError` (the entry is left out).
   */
  static async scan(
    root: string,
    store: Store,
    opts: {
      params: ChunkParams
      signal: AbortSignal
      exclude?: readonly string[]
      /** read every file asked about, whatever the store says (--checksum) */
      checksum?: boolean
      /** keep small files' content from their read until `takeContent` (the sender) */
      keepContent?: boolean
      onError?: (err: DsyncError) => void
      /** called with each dsync temp file found (see walkTree) */
      onTemp?: (path: string) => void
    },
  ): Promise<LocalFiles> {
    const files = new LocalFiles(root, store, opts.params, opts.signal, opts.onError, opts.checksum ?? false, opts.keepContent ?? false)
    const walkOpts = {
      exclude: opts.exclude ?? [],
      signal: opts.signal,
      ...(opts.onError && { onError: opts.onError }),
      ...(opts.onTemp && { onTemp: opts.onTemp }),
    }
    files.#walk = await TreeListing.walk(root, walkOpts)
    const gone = store.recordPaths().filter((p) => files.get(p)?.kind !== 'file')
    await Promise.all(gone.map((p) => store.delete(p)))
    return files
  }

  /** The walk's own entries, before anything this session did: directory summaries are of it. */
  get walked(): TreeListing {
    return this.#walk
  }

  /** Every entry, in walk order (comparePaths), as the session left it: what it made since
   *  the walk comes last. Each is made when reached (TreeListing): use it, do not keep it. */
  *entries(): Generator<TreeEntry> {
    for (const e of this.#walk.under()) {
      const now = this.#changed.get(e.path)
      if (now === undefined) yield e
      else if (now !== null) yield now
    }
    for (const path of this.#added) {
      const e = this.#changed.get(path)
      if (e) yield e
    }
  }

  /** What the session has now where the walk found `walked` (itself, unless the session
   *  changed it; undefined when removed): no search of the walk. */
  current(walked: TreeEntry): TreeEntry | undefined {
    const now = this.#changed.get(walked.path)
    return now === undefined ? walked : now ?? undefined
  }

  get(path: string): TreeEntry | undefined {
    const now = this.#changed.get(path)
    return now === undefined ? this.#walk.get(path) : now ?? undefined
  }

  /** What this side now has at `path` (written, or made a symlink or directory by the
   *  session). In place: the walk's order stays; #bySize is kept current. */
  set(entry: TreeEntry): void {
    const old = this.get(entry.path)
    if (old?.kind === 'file') this.#bySize?.get(old.size)?.delete(entry.path)
    if (!this.#changed.has(entry.path) && old === undefined) this.#added.add(entry.path)
    this.#changed.set(entry.path, entry)
    if (entry.kind === 'file' && this.#bySize !== undefined) this.#sized(this.#bySize, entry)
  }

  #sized(bySize: Map<number, Set<string>>, e: TreeEntry): void {
    let paths = bySize.get(e.size)
    if (paths === undefined) bySize.set(e.size, (paths = new Set()))
    paths.add(e.path)
  }

  delete(path: string): void {
    const old = this.get(path)
    if (old === undefined) return
    this.#changed.set(path, null)
    if (old.kind === 'file') this.#bySize?.get(old.size)?.delete(path)
  }

  /**
   * The file's record when the store's is current (same size and mtime as the walk saw, not
   * racy; with `checksum`, read this session), without reading the file; else undefined.
   */
  known(path: string): FileRecord | undefined {
    const e = this.get(path)
    if (e?.kind !== 'file' || (this.#readAll && !this.#readNow.has(path))) return undefined
    const storing = this.#storing.get(path)
    if (storing !== undefined) return storing.size === e.size && storing.mtimeMs === e.mtimeMs ? { ...storing, mode: e.mode } : undefined
    let rec = this.store.current(path, e)
    // Read by this session, a record holds for the session even when racy (racy means: read it
    // again next time). Without this, a file just written before the sync was no seed once its
    // record was stored: a push that found two seeds under load found one (test/cli/push-pull.ts).
    if (rec === undefined && this.#readNow.has(path)) {
      const got = this.store.get(path)
      if (got !== undefined && got.size === e.size && got.mtimeMs === e.mtimeMs) rec = got
    }
    return rec === undefined ? undefined : { ...rec, mode: e.mode }
  }

  /**
   * The file's current record, reading it (once, however many ask) when the store has none.
   * Undefined when it is not a regular file here, or vanished or cannot be read (`onError`
   * says why).
   */
  async record(path: string): Promise<FileRecord | undefined> {
    const known = this.known(path)
    if (known !== undefined) return known
    const e = this.get(path)
    if (e?.kind !== 'file') return undefined
    let read = this.#reads.get(path)
    if (read === undefined) {
      read = this.#slots.with(() => this.#read(e)).then((got) => {
        // Stored in the background: lmdb-js commits the puts pending at once in one
        // transaction, while awaiting each put before going on cost a commit per file (a
        // first push of 5,000 small files spent 35 of its 56 s waiting on them).
        if (got !== undefined) this.#store(got)
        if (got?.bytes !== undefined && this.#keepContent) this.#keep(e.path, got.bytes)
        return got?.record
      }).finally(() => this.#reads.delete(path))
      this.#reads.set(path, read)
    }
    return read
  }

  #keep(path: string, bytes: Uint8Array): void {
    this.takeContent(path)
    this.#kept.set(path, bytes)
    this.#keptBytes += bytes.length
    for (const [p, b] of this.#kept) {
      if (this.#keptBytes <= KEPT_CONTENT_BYTES) break
      this.#kept.delete(p)
      this.#keptBytes -= b.length
    }
  }

  /**
   * Forgets what is known of `path`'s content, so that the next `record` reads the file: a
   * sender asked again for a file the receiver found changed since it was read, which a change
   * that kept its size and mtime hides from the quick check.
   */
  async forget(path: string): Promise<void> {
    this.#storing.delete(path)
    this.takeContent(path)
    await this.store.delete(path)
  }

  /** The content read with the file's last record, if still kept (it stays kept). */
  keptContent(path: string): Uint8Array | undefined {
    return this.#kept.get(path)
  }

  /** The content read with the file's last record, if still kept (and forgets it). */
  takeContent(path: string): Uint8Array | undefined {
    const bytes = this.#kept.get(path)
    if (bytes !== undefined) {
      this.#kept.delete(path)
      this.#keptBytes -= bytes.length
    }
    return bytes
  }

  #store(got: ReadResult): void {
    const { path } = got.record
    this.#storing.set(path, got.record)
    const put = this.store.put(got.record, { racy: got.racy })
    this.track(put)
    void put.finally(() => {
      if (this.#storing.get(path) === got.record) this.#storing.delete(path)
    }).catch(() => undefined)
  }

  /**
   * Lets a store write of this session finish in the background. lmdb-js commits the writes
   * pending at once in one transaction (one fsync); a session that awaits each before going on
   * pays a commit per file. `flush` waits for them all before the session says it is done.
   */
  track(write: Promise<void>): void {
    this.#puts.add(write)
    write.then(() => this.#puts.delete(write), (err: unknown) => {
      this.#puts.delete(write)
      this.#putError ??= { err }
    })
  }

  /** Waits for the store writes tracked so far; rethrows the first that failed. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.#puts])
    if (this.#putError !== undefined) throw this.#putError.err
  }

  async #read(e: TreeEntry): Promise<ReadResult | undefined> {
    const got = await readRecord(this.dirs, e, {
      params: this.params, cutter: this.#cutter, signal: this.signal, ...(this.onError && { onError: this.onError }),
    })
    if (got === undefined) {
      if (sameEntry(this.get(e.path), e)) this.delete(e.path)
      return undefined
    }
    this.filesRead++
    this.bytesRead += got.record.size
    this.#readNow.add(e.path)
    // The file changed while read: the entry now says what the record describes.
    if (got.record.size !== e.size && sameEntry(this.get(e.path), e)) this.set({ ...e, size: got.record.size })
    return got
  }

  /** True when the tree has a regular file of exactly `size` bytes (the walk's, or written since). */
  hasFileOfSize(size: number): boolean {
    return (this.#sizeIndex().get(size)?.size ?? 0) > 0
  }

  /** True when the walk found a regular file of exactly `size` bytes: the tree as the session
   *  found it, whatever it wrote since. */
  walkHadFileOfSize(size: number): boolean {
    if (this.#walkSizes === undefined) {
      this.#walkSizes = new Set()
      for (const e of this.#walk.under()) if (e.kind === 'file') this.#walkSizes.add(e.size)
    }
    return this.#walkSizes.has(size)
  }

  #sizeIndex(): Map<number, Set<string>> {
    if (this.#bySize === undefined) {
      const bySize = (this.#bySize = new Map())
      for (const e of this.entries()) if (e.kind === 'file') this.#sized(bySize, e)
    }
    return this.#bySize
  }

  /**
   * Brings the content index up to date with the files of exactly `size` bytes (reads those the
   * store has no current record of): the only ones that can be a copy of a file of that size.
   */
  indexSize(size: number): Promise<void> {
    if (this.#indexed !== undefined) return this.#indexed
    let pass = this.#sizesIndexed.get(size)
    if (pass === undefined) {
      const paths = [...(this.#sizeIndex().get(size) ?? [])]
      pass = (async () => {
        await this.#readUnknown(paths)
        // findByDigest reads the store: what was read must be in it. Waiting for every write
        // of the session (one lmdb commit each time) when none of this size is pending held
        // each new file of a first push behind the others' commits.
        if (paths.some((p) => this.#storing.has(p))) await this.flush()
      })()
      this.#sizesIndexed.set(size, pass)
    }
    return pass
  }

  /**
   * Brings the content index up to date with every file of the tree (reads those the store
   * has no current record of), once per session; later calls wait for the same pass. Needed
   * before a seed is looked for by content; nothing else waits for it.
   */
  indexAll(): Promise<void> {
    this.#indexed ??= this.#indexFiles(() => true)
    return this.#indexed
  }

  /**
   * indexAll for the files of at least `minSize` bytes only (smallestSeedBytes: no smaller file
   * can be the seed looked for), once per session per power of two of `minSize`; after indexAll,
   * its pass.
   */
  indexFrom(minSize: number): Promise<void> {
    if (this.#indexed !== undefined || minSize <= 0) return this.indexAll()
    const floor = 2 ** Math.floor(Math.log2(minSize))
    let pass = this.#fromIndexed.get(floor)
    if (pass === undefined) this.#fromIndexed.set(floor, (pass = this.#indexFiles((e) => e.size >= floor)))
    return pass
  }

  /** Reads the record of each file `keep` picks that the store has no current record of, and
   *  waits for the store's writes: the index is the store's, what was read must be in it. */
  async #indexFiles(keep: (e: TreeEntry) => boolean): Promise<void> {
    const paths: string[] = []
    for (const e of this.entries()) if (e.kind === 'file' && keep(e)) paths.push(e.path)
    await this.#readUnknown(paths)
    await this.flush()
  }

  /** Reads the record of each file of `paths` the store has no current record of. Bounded:
   *  the semaphore holds READS_IN_FLIGHT; waiting every 64 keeps the promises few too. */
  async #readUnknown(paths: readonly string[]): Promise<void> {
    const pending: Promise<unknown>[] = []
    for (const path of paths) {
      if (this.known(path) !== undefined) continue
      pending.push(this.record(path))
      if (pending.length >= 64) await Promise.all(pending.splice(0))
    }
    await Promise.all(pending)
  }
}

/** The same entry as the walk (or the session) left it: what a read started from is still
 *  what the tree says (entries are made anew on each lookup, so not by identity). */
function sameEntry(a: TreeEntry | undefined, b: TreeEntry): boolean {
  return a !== undefined && a.kind === b.kind && a.size === b.size && a.mtimeMs === b.mtimeMs && a.mode === b.mode && a.target === b.target
}
