import type { FileEntry } from '../net/index.js'
import { sameMtime, type PairBase, type Store, type SyncBase } from '../store/index.js'
import type { FileEvent } from './report.js'
import type { TreeSummary } from './tree-summary.js'
import { baseOf } from './two-way/changes.js'

/** True when `next` says nothing `old` does not: same kind, size, mtime (to the quick check's
 *  millisecond: a file's time set on one side reads back ~1 µs off the other's, and a no-op
 *  push of 100,000 files by directory summary rewrote every base for that), mode, target, and
 *  a digest only if old has the same one. */
function sameBase(old: PairBase | undefined, next: PairBase): boolean {
  return old !== undefined && old.kind === next.kind && old.size === next.size && sameMtime(old.mtimeMs, next.mtimeMs) && old.mode === next.mode &&
    old.target === next.target && (next.digest === undefined || next.digest === old.digest)
}

/** Pair bases written in one transaction (PeerBases.record). */
const RECORD_BATCH = 8192

/**
 * Bases of settled files written in one transaction while the session goes on (settled). At
 * 8,192 a first push of 200,000 files raised the server's anonymous memory by ~37 MiB (lmdb's
 * dirty pages of each transaction, on top of everything else the session holds then); at 1,024,
 * 50,000 files, RssAnon 160 / 151 MiB against 170 / 150 before (bench/README.md).
 */
const SETTLED_BATCH = 1024

/**
 * The server's record of what it last synced with one client replica, kept by push and pull
 * too (the same pair bases as `dsync sync`). With several machines pushing to one server, the
 * server's own "last synced" base is whatever the last pusher wrote, so a machine that never
 * saw that version overwrote it as if it were its own (8 concurrent pushers: 7 of 8 clients'
 * edits replaced every round, each told its push landed). Against the base of the pushing
 * replica, that version is a change the pusher has not seen: a conflict (both kept), or kept
 * when the pusher did not change the file.
 */
export class PeerBases {
  /** entries listed whose file has not settled yet (settled): the files in flight, the
   *  directories, and on the sender's side (pull) what the receiver says nothing of */
  readonly #listed = new Map<string, FileEntry>()
  /** bases of files settled, not yet written (written SETTLED_BATCH at a time) */
  #settled = new Map<string, PairBase | null>()
  /** the writes of settled bases, one after another; the first failure is record's */
  #writing: Promise<void> = Promise.resolve()
  /** folders directory summaries stood for, with the summaries: walked at `record`, not kept */
  readonly #stoodFor: { readonly dir: string; readonly summary: TreeSummary }[] = []

  private constructor(
    private readonly store: Store,
    private readonly replica: string,
  ) {}

  /**
   * The replica's base of `path`, read from the store when asked (only this session writes
   * them meanwhile: it holds the tree). The whole set was loaded into a map once a session: for
   * a no-op of 1,000,000 files, a million decoded bases held at the end of the session beside
   * everything else the server holds per file.
   */
  #old(path: string): PairBase | undefined {
    return this.store.pairBases().get(this.replica, path)
  }

  /** The bases of `replica`, or undefined for a client that names none (dsync before 0.3). */
  static open(store: Store, replica: string | undefined): PeerBases | undefined {
    return replica === undefined ? undefined : new PeerBases(store, replica)
  }

  /** The base the receiver checks an overwrite against: the pair base when there is one, else
   *  the tree's own (a client that has not synced with this tree since it had a replica id). */
  baseOf(path: string): SyncBase | undefined {
    const b = this.#old(path)
    if (b === undefined || b.kind !== 'file') return this.store.getBase(path)
    return { size: b.size, mtimeMs: b.mtimeMs, ...(b.digest !== undefined && { digest: b.digest }) }
  }

  /** Notes entries of the session's file list (RoleDeps.onListed): listed, either way, or
   *  stood for by a directory summary (§4.9). */
  note(entries: readonly FileEntry[]): void {
    for (const e of entries) this.#listed.set(e.path, e)
  }

  /** Notes a folder a directory summary stood for (RoleDeps.onStoodFor): everything under it. */
  noteStoodFor(dir: string, summary: TreeSummary): void {
    this.#stoodFor.push({ dir, summary })
  }

  /**
   * A listed file settled (RoleDeps.onSettled: the receiver's events as they come, or on a pull
   * the client's results): what both sides now have, unless it failed or was kept, which keep
   * their old base. Written as files settle, SETTLED_BATCH at a time, so what the session holds
   * is the files in flight, not every entry listed: a first push of 200,000 files kept all of
   * them to the end (part of the server's ~0.5 KB a file, bench/README.md "A first push of many
   * small files"). A file that settled is the same on both sides whether or not the session
   * completes, so its base may be written before the session ends (and a session cut short
   * leaves it: the next sync does not take the version it brought for a change of the other's).
   */
  settled(e: FileEvent): void {
    if (e.action === 'deleted') return // record's
    const listed = this.#listed.get(e.path)
    // A file of a folder a summary stood for (a pull's whole tree): its entry is the summary's,
    // and record's walk of that folder finds its base written.
    const entry = listed ?? this.#stoodForEntry(e.path)
    if (entry === undefined) return // not listed, or settled already
    this.#listed.delete(e.path)
    if (e.action === 'error' || e.action === 'kept') return
    const base = this.#moved(entry)
    if (base === undefined) return
    this.#settled.set(e.path, base)
    if (this.#settled.size < SETTLED_BATCH) return
    const batch = this.#settled
    this.#settled = new Map()
    const pairs = this.store.pairBases()
    this.#writing = this.#writing.then(() => pairs.update(this.replica, batch))
    // Awaited by record; until then a failure must not be an unhandled rejection.
    this.#writing.catch(() => undefined)
  }

  /** The base `e` makes, unless its base says so already. Only what moved is written: a no-op
   *  push of 50,000 files rewrote every base (0.2 of the server's 2.6 CPU s). A base that knows
   *  a digest keeps it while size and mtime say the file is the one it was taken from. */
  #moved(e: FileEntry): PairBase | undefined {
    const base = baseOf(e)
    return sameBase(this.#old(e.path), base) ? undefined : base
  }

  #stoodForEntry(path: string): FileEntry | undefined {
    for (const { dir, summary } of this.#stoodFor) {
      if (dir !== '' && !path.startsWith(`${dir}/`)) continue
      const e = summary.entry(path)
      if (e !== undefined) return e as FileEntry
    }
    return undefined
  }

  /** Waits for the writes of settled bases started so far, failed or not: before the store
   *  closes, when the session ends early (record, when it completes, reports a failure). */
  async written(): Promise<void> {
    await this.#writing.catch(() => undefined)
  }

  /** After a session that completed: every listed path whose outcome succeeded is what both
   *  sides now have (those settled as they came are written already, or with the first batch
   *  here); a deleted one has no base; a failed or kept one keeps its old base. The
   *  folders summaries stood for are walked but where covered as they are (PairBases.covered);
   *  each walked is covered once its bases are written, when no file of the session failed. */
  async record(events: readonly FileEvent[]): Promise<void> {
    await this.#writing
    const failed = new Set(events.filter((e) => e.action === 'error' || e.action === 'kept').map((e) => e.path))
    const pairs = this.store.pairBases()
    let changes = this.#settled
    this.#settled = new Map()
    /** folders walked since the last write, noted with it (as the receiver notes its bases'
     *  covers, #recordImplied); none when a file of the session failed: the folder it is in
     *  keeps its old base, not its entry */
    let covers: [string, Uint8Array][] = []
    const write = async (): Promise<void> => {
      await pairs.update(this.replica, changes, failed.size === 0 ? covers : [])
      changes = new Map()
      covers = []
    }
    const note = async (e: FileEntry): Promise<void> => {
      if (failed.has(e.path)) return
      const base = this.#moved(e)
      if (base !== undefined) changes.set(e.path, base)
      // Written RECORD_BATCH at a time: a first sync of 1,000,000 files made one map and one
      // transaction of them all (the server's peak 499 MB). Each path's base is the last
      // sync's or this one's, both of which its two sides once agreed on; a crash in between
      // leaves some of each, as a crash before the record left all the old.
      if (changes.size >= RECORD_BATCH) await write()
    }
    for (const e of this.#listed.values()) await note(e)
    const walk = async (dir: string, summary: TreeSummary): Promise<void> => {
      const hash = summary.hash(dir)! // a summary stood for it
      if (pairs.covered(this.replica, dir, hash)) return
      for (const e of summary.children(dir)) {
        await note(e as FileEntry)
        if (e.kind === 'dir') await walk(e.path, summary)
      }
      covers.push([dir, hash])
    }
    for (const { dir, summary } of this.#stoodFor) await walk(dir, summary)
    for (const e of events) {
      // A moved file's old path (PROTOCOL.md §4.14) is gone as a deleted one is.
      const gone = e.action === 'deleted' ? e.path : e.action === 'moved' ? e.seed : undefined
      if (gone !== undefined && this.#old(gone) !== undefined) changes.set(gone, null)
    }
    await write()
  }
}
