import { chmod, copyFile, lstat, mkdir, rename, rm, rmdir, symlink, utimes } from 'node:fs/promises'
import { constants as fsConstants } from 'node:fs'
import { dirname, join, posix } from 'node:path'
import { chunkList, cutterFor, type ChunkParams } from '../chunk/index.js'
import { blockSizeForChange, changedRegions, computeSignature, decide, encodeSignature, MIN_MEASURABLE_CHUNKS, type SeedCandidate } from '../delta/index.js'
import { DsyncError, isDsyncError } from '../errors.js'
import { fsError, openFileSource, patchFile, resolveInside, syncDirectory, TEMP_PREFIX, walkTree, writeAtomically, type TreeEntry } from '../fs/index.js'
import { FileDigester } from '../hash/index.js'
import { CLOSE, type Channel, type FileEntry, type Message, type SessionOptions } from '../net/index.js'
import { metricByName, profile } from '../similarity/index.js'
import { sampleChunks, scanTree, type FileRecord, type Store } from '../store/index.js'
import type { Chunk, FileDigest } from '../types.js'
import { ByteQueue } from './byte-queue.js'
import { checkOverwrite, conflictCopyPath } from './conflict.js'
import type { Action, FileEvent, SyncReport } from './report.js'
import { Semaphore } from './limit.js'
import { SendChain, TaskGroup } from './tasks.js'

/** Everything the receiver role needs, given by the flow (push on the server, pull on the client). */
export interface ReceiverDeps {
  /** absolute path of the tree being written */
  readonly root: string
  readonly store: Store
  readonly params: ChunkParams
  readonly options: SessionOptions
  readonly report: SyncReport
  readonly signal: AbortSignal
  readonly now: () => Date
}

/** Times are compared to the millisecond: utimes() goes through a double of seconds, which
 *  cannot hold every nanosecond, and file systems differ below that. */
function sameMtime(a: number, b: number): boolean {
  return Math.abs(a - b) < 1
}

/** The relative parent of a relative path: '' for a top-level name. */
function parentOf(path: string): string {
  const i = path.lastIndexOf('/')
  return i < 0 ? '' : path.slice(0, i)
}

/** Candidate seeds looked at per file, beyond the file at the same path. */
const MAX_CANDIDATES = 4

/**
 * Files being fetched at once: each holds a temp file open and a plan at the sender. Without a
 * bound a tree of 20,000 new files opened 20,000 temp files (EMFILE). Many in flight keep
 * small-file syncs fast: fsyncs overlap (0.2 ms per small file at 16 in parallel against 1.0 ms
 * one at a time, measured here), and the sender streams several files at once.
 */
const MAX_FETCHES = 16

/** A file the receiver asked the sender for, from `want` until its result. */
interface Transfer {
  readonly id: number
  readonly entry: FileEntry
  /** the receiver's current file at that path, if it is a regular file */
  readonly current: (TreeEntry & { record?: FileRecord }) | undefined
  conflict: boolean
  chunks?: readonly Chunk[]
  /** the file's digest, from the list (--checksum) or with its chunks */
  digest?: FileDigest
  /** the chunk list is a sample (a large file): compare it with samples of the seeds */
  sampled?: boolean
  /** pieces of a chunk list still arriving */
  partial?: readonly Chunk[]
  queue?: ByteQueue
  retried: boolean
}

/**
 * The receiver role: the side that has the seeds. It reads the sender's file list, decides per
 * file (unchanged, local copy, delta against the most similar file it has, or whole), asks for
 * and rebuilds what it needs (atomically, verified), applies --delete, and reports every
 * decision. Runs over any Channel; returns when the sender closes the session.
 */
export async function runReceiver(channel: Channel, deps: ReceiverDeps): Promise<void> {
  return new Receiver(channel, deps).run()
}

class Receiver {
  readonly #out: SendChain
  readonly #tasks: TaskGroup
  readonly #transfers = new Map<number, Transfer>()
  readonly #seen = new Set<string>()
  readonly #dirs: FileEntry[] = []
  /** directories with renamed-in files whose fsync is still due (done once, at the end) */
  readonly #dirty = new Set<string>()
  readonly #fetchSlots = new Semaphore(MAX_FETCHES)
  /**
   * Directories (relative, '' = root) known to be real directories in the root: found by the
   * scan (lstat: not symlinks) or made by this session. A path whose parent is known needs no
   * symlink check of its ancestors again (resolveInside costs an lstat per component, which
   * was the receiver's top system call on trees of small files). Only this session writes the
   * tree's structure: it makes symlinks only where the scan found no directory.
   */
  readonly #knownDirs = new Set<string>([''])
  /** base name → local files with it (scan time), for guessing the source of a moved file */
  readonly #byName = new Map<string, string[]>()
  readonly #metric
  #local = new Map<string, TreeEntry & { record?: FileRecord }>()
  #nextId = 1
  #listDone = false
  #finished = false

  constructor(
    private readonly channel: Channel,
    private readonly d: ReceiverDeps,
  ) {
    this.#out = new SendChain(channel)
    this.#tasks = new TaskGroup(() => channel.close(CLOSE.goingAway, 'receiver failed'))
    this.#metric = metricByName(d.options.metric)
  }

  async run(): Promise<void> {
    const scan = await scanTree(this.d.root, this.d.store, { params: this.d.params, exclude: this.d.options.exclude, signal: this.d.signal })
    this.#local = new Map(scan.entries.map((e) => [e.path, e]))
    for (const e of scan.entries) {
      if (e.kind === 'dir') this.#knownDirs.add(e.path)
      if (e.kind !== 'file') continue
      const name = posix.basename(e.path)
      const list = this.#byName.get(name)
      if (list === undefined) this.#byName.set(name, [e.path])
      else list.push(e.path)
    }
    this.d.report.countScan(scan.filesRead)
    try {
      for await (const msg of this.channel.messages()) {
        await this.#handle(msg)
        if (this.#tasks.failure !== undefined) throw this.#tasks.failure
      }
      if (this.#tasks.failure !== undefined) throw this.#tasks.failure
      if (!this.#finished || this.#transfers.size > 0) {
        throw new DsyncError('NETWORK', 'the sender closed the session before it was complete; run the command again')
      }
    } catch (err) {
      // Writers still waiting for data give up: their temp files go, the old files stay.
      const cause = isDsyncError(err) ? err : new DsyncError('NETWORK', 'connection lost during the transfer', { cause: err })
      for (const t of this.#transfers.values()) t.queue?.fail(cause)
      await this.#tasks.settled().catch(() => undefined)
      throw err
    }
    await this.#tasks.settled()
    await this.#out.flushed()
  }

  async #handle(msg: Message): Promise<void> {
    switch (msg.t) {
      case 'files':
        for (const e of msg.entries) await this.#entry(e)
        return
      case 'filesEnd':
        this.#listDone = true
        this.#maybeFinish()
        return
      case 'chunks': {
        // A long list arrives in pieces; the last one has no `more`.
        const t = this.#transfer(msg.id)
        t.partial = t.partial === undefined ? msg.chunks : [...t.partial, ...msg.chunks]
        t.sampled = msg.sampled === true
        if (msg.more === true) return
        const chunks = t.partial
        t.partial = undefined
        if (msg.digest === undefined) throw new DsyncError('BAD_MESSAGE', `chunk list of file id ${msg.id} without its digest`)
        return this.#chunks(msg.id, chunks, msg.digest)
      }
      case 'data': {
        const t = this.#streaming(msg.id)
        return t?.queue?.push(msg.bytes)
      }
      case 'dataEnd':
        this.#streaming(msg.id)?.queue?.end()
        return
      default:
        throw new DsyncError('BAD_MESSAGE', `unexpected "${msg.t}" message from the sender`)
    }
  }

  /** The transfer data is arriving for; undefined when it already ended here (a writer that
   *  failed early stops listening while the sender is still streaming). */
  #streaming(id: number): Transfer | undefined {
    const t = this.#transfers.get(id)
    if (t === undefined && id > 0 && id < this.#nextId) return undefined
    if (t?.queue === undefined) throw new DsyncError('BAD_MESSAGE', `data for file id ${id}, which has no plan`)
    return t
  }

  #transfer(id: number): Transfer {
    const t = this.#transfers.get(id)
    if (t === undefined) throw new DsyncError('BAD_MESSAGE', `message for unknown file id ${id}`)
    return t
  }

  /** Records an event locally and tells the sender (unchanged files cost nothing on the wire). */
  #event(e: FileEvent, id = 0): void {
    this.d.report.add(e)
    if (e.action === 'unchanged') return
    this.#out.post({
      t: 'result',
      id,
      path: e.path,
      action: e.action,
      ok: e.action !== 'error',
      ...(e.code !== undefined && { code: e.code }),
      ...(e.message !== undefined && { message: e.message }),
      ...(e.seed !== undefined && { seed: e.seed }),
      ...(e.similarity !== undefined && { similarity: e.similarity }),
      ...(e.conflictCopy !== undefined && { conflictCopy: e.conflictCopy }),
    })
  }

  #fail(path: string, err: unknown, id = 0): void {
    if (!isDsyncError(err) || err.code === 'ABORTED' || err.code === 'NETWORK') throw err
    this.#event({ path, action: 'error', code: err.code, message: err.message }, id)
  }

  async #entry(e: FileEntry): Promise<void> {
    this.#seen.add(e.path)
    try {
      if (e.kind === 'dir') await this.#dir(e)
      else if (e.kind === 'symlink') await this.#symlink(e)
      else await this.#file(e)
    } catch (err) {
      this.#fail(e.path, err)
    }
  }

  #typeClash(e: FileEntry, cur: TreeEntry): never {
    throw new DsyncError(
      'NOT_A_FILE',
      `${e.path}: is a ${cur.kind} on the receiver but a ${e.kind} on the sender; remove one of them and sync again`,
      { path: e.path },
    )
  }

  async #dir(e: FileEntry): Promise<void> {
    const cur = this.#local.get(e.path)
    this.#dirs.push(e)
    if (cur !== undefined && cur.kind !== 'dir') this.#typeClash(e, cur)
    if (cur !== undefined) {
      if (cur.mode !== e.mode && !this.d.options.dryRun) await chmod(await this.#abs(e.path), e.mode)
      return
    }
    if (!this.d.options.dryRun) {
      await mkdir(await this.#abs(e.path), { mode: e.mode })
      this.#knownDirs.add(e.path)
    }
    this.#event({ path: e.path, action: 'dir' })
  }

  async #symlink(e: FileEntry): Promise<void> {
    const cur = this.#local.get(e.path)
    if (cur?.kind === 'symlink' && cur.target === e.target) return
    if (cur?.kind === 'dir') this.#typeClash(e, cur)
    if (this.#knownDirs.has(e.path)) {
      // Listed as a directory earlier in this session: a link there now could lead writes out.
      throw new DsyncError('UNSAFE_PATH', `${e.path}: listed both as a directory and as a symlink; refused`, { path: e.path })
    }
    if (!this.d.options.dryRun) {
      // Made under a temp name and renamed over: the path is never missing, never followed.
      const abs = await resolveInside(this.d.root, e.path, { allowFinalSymlink: true })
      const tmp = join(dirname(abs), `${TEMP_PREFIX}${process.pid}-${posix.basename(e.path)}`)
      await rm(tmp, { force: true })
      await symlink(e.target ?? '', tmp)
      await rename(tmp, abs)
    }
    this.#event({ path: e.path, action: 'symlink', message: e.target })
  }

  async #file(e: FileEntry): Promise<void> {
    this.d.report.countFile(e.size)
    // Refuse a path under a symlink (or any unsafe path) before asking for a single byte.
    await this.#abs(e.path)
    const cur = this.#local.get(e.path)
    if (cur !== undefined && cur.kind !== 'file') this.#typeClash(e, cur)
    const t: Transfer = { id: this.#nextId++, entry: e, current: cur, conflict: false, retried: false }
    if (e.digest === undefined) {
      // rsync's quick check: same size and mtime is the same file. The list carries no digests
      // (32 bytes a file: most of a no-op's bytes); a changed file's comes with its chunks.
      if (cur?.record !== undefined && cur.size === e.size && sameMtime(cur.mtimeMs, e.mtimeMs)) {
        return this.#sameContent(e, cur, cur.record.digest)
      }
    } else if (await this.#resolveLocally(t, e.digest)) return
    this.#transfers.set(t.id, t)
    this.#out.post({ t: 'want', id: t.id, path: e.path })
  }

  /**
   * What the digest alone settles: same content (unchanged), a file only the receiver changed
   * (kept), identical content elsewhere in the tree (local copy). Marks a conflict for the
   * transfer. True when nothing needs to come over the wire.
   */
  async #resolveLocally(t: Transfer, digest: FileDigest): Promise<boolean> {
    const { entry: e, current: cur } = t
    if (cur?.record !== undefined) {
      if (cur.record.digest === digest) {
        await this.#sameContent(e, cur, digest, t.id)
        return true
      }
      const verdict = checkOverwrite({
        current: cur.record.digest,
        currentMtimeMs: cur.mtimeMs,
        incoming: digest,
        incomingMtimeMs: e.mtimeMs,
        base: this.d.store.getBase(e.path),
        force: this.d.options.force,
      })
      if (verdict === 'kept') {
        this.#event(
          {
            path: e.path,
            action: 'kept',
            code: 'CHANGED_ON_RECEIVER',
            message: `${e.path}: changed on the receiver since the last sync and not on the sender; kept the receiver's copy (pull to get it, or use --force)`,
          },
          t.id,
        )
        return true
      }
      t.conflict = verdict === 'conflict'
    }
    const copyOf = this.d.store.findByDigest(digest).find((p) => p !== e.path && this.#local.get(p)?.kind === 'file')
    return copyOf !== undefined && (await this.#copyLocal(e, digest, copyOf, cur, t.conflict, t.id))
  }

  /** Same content: at most the mode and mtime need setting. */
  async #sameContent(e: FileEntry, cur: TreeEntry & { record?: FileRecord }, digest: FileDigest, id = 0): Promise<void> {
    if (this.d.store.getBase(e.path) !== digest && !this.d.options.dryRun) await this.d.store.setBase(e.path, digest)
    const sameTime = sameMtime(cur.mtimeMs, e.mtimeMs)
    if (cur.mode === e.mode && sameTime) return this.#event({ path: e.path, action: 'unchanged', size: e.size }, id)
    if (!this.d.options.dryRun) {
      const abs = await this.#abs(e.path)
      if (cur.mode !== e.mode) await chmod(abs, e.mode)
      if (!sameTime) await utimes(abs, e.mtimeMs / 1000, e.mtimeMs / 1000)
      await this.#record(e.path, abs, digest, cur.record!.chunks)
    }
    this.#event({ path: e.path, action: 'meta', size: e.size }, id)
  }

  /** Identical content exists at `from` on this side: copy it, verified, no data on the wire.
   *  False when the source turned out not to match (changed since the scan): fetch instead. */
  async #copyLocal(e: FileEntry, digest: FileDigest, from: string, cur: TreeEntry | undefined, conflict: boolean, id: number): Promise<boolean> {
    const event: FileEvent = { path: e.path, action: 'copy', seed: from, size: e.size, similarity: 1 }
    if (this.d.options.dryRun) {
      this.#event(event, id)
      return true
    }
    const abs = await this.#abs(e.path)
    const src = await this.#abs(from)
    await this.#ensureParent(e.path, abs)
    const conflictCopy = conflict && cur ? await this.#keepConflictCopy(e.path, abs) : undefined
    try {
      await writeAtomically(
        abs,
        async (sink) => {
          const d = new FileDigester()
          for await (const buf of openFileSource(src, { signal: this.d.signal })) {
            d.update(buf)
            await sink.write(buf)
          }
          if (d.digest() !== digest) throw new DsyncError('DIGEST_MISMATCH', `${from}: changed while being copied`)
        },
        { mode: e.mode, mtimeMs: e.mtimeMs, signal: this.d.signal, syncDir: false },
      )
      this.#dirty.add(dirname(abs))
    } catch (err) {
      if (isDsyncError(err, 'DIGEST_MISMATCH') || isDsyncError(err, 'NOT_FOUND')) return false
      throw err
    }
    await this.#record(e.path, abs, digest, this.d.store.get(from)?.chunks)
    this.#event({ ...event, ...(conflictCopy !== undefined && { action: 'conflict', conflictCopy }) }, id)
    return true
  }

  /** The sender's chunk list for a file we asked for: settle it locally if its digest allows,
   *  else pick the seed, decide, and fetch it (in a task: a local copy or a seed's signature
   *  must not stall the message pump). */
  async #chunks(id: number, chunks: readonly Chunk[], digest: FileDigest): Promise<void> {
    const t = this.#transfer(id)
    t.chunks = chunks
    t.digest = digest
    this.#tasks.spawn(
      () =>
        this.#fetchSlots.with(async () => {
          try {
            if (await this.#resolveLocally(t, digest)) return void this.#transfers.delete(id)
          } catch (err) {
            this.#transfers.delete(id)
            return this.#fail(t.entry.path, err, id)
          }
          return this.#decideAndFetch(t, chunks)
        }),
      () => this.#maybeFinish(),
    )
  }

  async #decideAndFetch(t: Transfer, chunks: readonly Chunk[]): Promise<void> {
    const id = t.id
    const target = profile(chunks)
    const cands: SeedCandidate[] = []
    const add = (path: string): void => {
      const rec = this.#local.get(path)?.record
      // A sampled target is measured against the same sample of each seed.
      if (rec !== undefined && !cands.some((c) => c.path === path)) cands.push({ path, profile: profile(t.sampled ? sampleChunks(rec.chunks) : rec.chunks) })
    }
    if (t.current?.record) add(t.entry.path)
    for (const c of this.d.store.candidates(chunks, { limit: MAX_CANDIDATES })) add(c.path)
    // The file this one most likely was: the same path, or else — for a small file whose
    // chunks the index cannot match after an edit — a file of the same name elsewhere (a move),
    // as rsync's --fuzzy guesses by name. A wrong guess costs only a small signature.
    let samePath = t.current?.record ? t.entry.path : undefined
    if (samePath === undefined && cands.length === 0 && chunks.length < MIN_MEASURABLE_CHUNKS) {
      samePath = this.#sameName(t.entry)
      if (samePath !== undefined) add(samePath)
    }
    const decision = decide(target, cands, this.#metric, this.d.options.threshold, samePath === undefined ? {} : { samePath })
    const action: Action = decision.method === 'delta' ? 'delta' : t.current ? 'whole' : 'new'
    const event: FileEvent = {
      path: t.entry.path,
      action,
      size: t.entry.size,
      ...(decision.seed !== null && { seed: decision.seed, similarity: decision.similarity }),
      ...(decision.note !== undefined && { message: decision.note }),
    }
    if (this.d.options.dryRun) {
      this.#transfers.delete(id)
      this.#event(event, id)
      return
    }
    const seedProfile = cands.find((c) => c.path === decision.seed)?.profile
    // A sampled list holds a fraction of the file's bytes: scale what it shows to the whole.
    const scale = t.sampled === true && target.multiset.total > 0 ? t.entry.size / target.multiset.total : 1
    const regions = decision.method === 'delta' && seedProfile ? changedRegions(target, seedProfile, scale) : 0
    return this.#fetch(t, decision.method === 'delta' ? decision.seed : null, event, regions)
  }

  /** A local regular file with the same base name as `e` (nearest in size), if any. */
  #sameName(e: FileEntry): string | undefined {
    const name = posix.basename(e.path)
    let best: string | undefined
    let bestGap = Infinity
    for (const path of this.#byName.get(name) ?? []) {
      const rec = this.#local.get(path)?.record
      if (rec === undefined || path === e.path) continue
      const gap = Math.abs(rec.size - e.size)
      if (gap < bestGap) [best, bestGap] = [path, gap]
    }
    return best
  }

  /** Sends the plan for one file and rebuilds it from the data that comes back. */
  async #fetch(t: Transfer, seed: string | null, event: FileEvent, regions = 0): Promise<void> {
    const path = t.entry.path
    try {
      const seedAbs = seed === null ? null : await this.#abs(seed)
      // Blocks sized for the change the chunk lists show: few regions changed, big blocks and a
      // small signature; many scattered edits, small blocks and little literal.
      const size = seed === null ? 0 : (this.#local.get(seed)?.record?.size ?? 0)
      const blockSize = blockSizeForChange(size, regions)
      const signature =
        seedAbs === null
          ? null
          : encodeSignature(await computeSignature(openFileSource(seedAbs, { signal: this.d.signal }), { size, blockSize, signal: this.d.signal }))
      t.queue = new ByteQueue()
      this.#out.post({ t: 'plan', id: t.id, method: seed === null ? 'whole' : 'delta', seed, similarity: event.similarity ?? 0, signature })
      const abs = await this.#abs(path)
      await this.#ensureParent(path, abs)
      const conflictCopy = t.conflict && t.current ? await this.#keepConflictCopy(path, abs) : undefined
      const res = await patchFile(seedAbs, t.queue, abs, { mode: t.entry.mode, mtimeMs: t.entry.mtimeMs, signal: this.d.signal, syncDir: false })
      this.#dirty.add(dirname(abs))
      // The chunk list describes the sender's file as listed; if it changed while being sent,
      // the rebuilt file has another digest and its chunks must be computed here.
      // The sender's list describes the file we wrote only when it is whole (not a sample) and
      // the file did not change while being sent; else the chunks are computed here.
      await this.#record(path, abs, res.digest, res.digest === t.digest && t.sampled !== true ? t.chunks : undefined)
      this.#transfers.delete(t.id)
      this.#event({ ...event, copiedBytes: res.copiedBytes, literalBytes: res.literalBytes, ...(conflictCopy !== undefined && { action: 'conflict', conflictCopy }) }, t.id)
    } catch (err) {
      if (isDsyncError(err, 'DIGEST_MISMATCH') && seed !== null && !t.retried) {
        // A weak-sum false match, or the seed changed under us: the whole file always works.
        t.retried = true
        return this.#fetch(t, null, { ...event, action: t.current ? 'whole' : 'new' })
      }
      this.#transfers.delete(t.id)
      this.#fail(path, err, t.id)
    }
  }

  /** Before overwriting a file both sides changed: keep the receiver's version beside it. */
  async #keepConflictCopy(path: string, abs: string): Promise<string> {
    const copyPath = conflictCopyPath(path, this.d.now())
    const copyAbs = await this.#abs(copyPath)
    try {
      await copyFile(abs, copyAbs, fsConstants.COPYFILE_EXCL)
    } catch (err) {
      throw fsError(err, copyPath, 'keep a conflict copy')
    }
    return copyPath
  }

  /** Stores what this side now has at `path` (for the next quick check and as the sync base). */
  async #record(path: string, abs: string, digest: FileRecord['digest'], chunks: readonly Chunk[] | undefined): Promise<void> {
    const st = await lstat(abs)
    // The digest is known (the rebuilt file was verified against it): chunk without it.
    const list = chunks ?? (await chunkList(openFileSource(abs, { signal: this.d.signal }), cutterFor(this.d.params), { signal: this.d.signal }))
    const rec: FileRecord = { path, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777, digest, chunks: list }
    await this.d.store.put(rec)
    await this.d.store.setBase(path, digest)
    this.#local.set(path, { path, kind: 'file', size: st.size, mtimeMs: st.mtimeMs, mode: rec.mode, record: rec })
  }

  /** --delete: remove what the sender does not have, deepest first; never a file changed here
   *  since the last sync (that would lose work: it is reported as kept). */
  async #deleteExtras(): Promise<void> {
    // What the ignore rules exclude is never deleted, and the rules that count are the ones in
    // the tree now: a .dsyncignore the sender just wrote applies to files already here.
    const visible = new Set<string>()
    for await (const e of walkTree(this.d.root, { exclude: this.d.options.exclude, signal: this.d.signal })) visible.add(e.path)
    const extras = [...this.#local.values()]
      .filter((e) => !this.#seen.has(e.path) && visible.has(e.path))
      .sort((a, b) => (a.path < b.path ? 1 : -1))
    for (const e of extras) {
      try {
        const base = this.d.store.getBase(e.path)
        if (e.kind === 'file' && base !== undefined && e.record !== undefined && e.record.digest !== base && !this.d.options.force) {
          this.#event({ path: e.path, action: 'kept', code: 'CHANGED_ON_RECEIVER', message: `${e.path}: changed on the receiver since the last sync; not deleted (use --force to delete it)` })
          continue
        }
        if (!this.d.options.dryRun) {
          const abs = await resolveInside(this.d.root, e.path, { allowFinalSymlink: true })
          if (e.kind === 'dir') {
            try {
              await rmdir(abs)
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code === 'ENOTEMPTY') continue // holds kept files
              throw err
            }
          } else await rm(abs, { force: true })
          if (e.kind === 'file') {
            await this.d.store.delete(e.path)
            await this.d.store.deleteBase(e.path)
          }
        }
        this.#local.delete(e.path)
        this.#knownDirs.delete(e.path)
        this.#event({ path: e.path, action: 'deleted' })
      } catch (err) {
        this.#fail(e.path, isDsyncError(err) ? err : fsError(err, e.path, 'delete it'))
      }
    }
  }

  /** When the list is complete and every file is settled: --delete (only now: a file about to
   *  go may be the seed of a renamed one), directory times, then `done`. */
  #maybeFinish(): void {
    if (this.#finished || !this.#listDone || this.#transfers.size > 0) return
    this.#finished = true
    this.#tasks.spawn(async () => {
      if (this.d.options.delete) await this.#deleteExtras()
      // The renames become durable before the sender hears `done`.
      for (const dir of this.#dirty) await syncDirectory(dir)
      if (!this.d.options.dryRun) {
        // Deepest first: setting a parent's time must come after its children are written.
        for (const e of [...this.#dirs].reverse()) {
          const abs = await this.#abs(e.path)
          await utimes(abs, e.mtimeMs / 1000, e.mtimeMs / 1000).catch((err: unknown) => this.#fail(e.path, fsError(err, e.path, 'set its time')))
        }
      }
      this.#out.post({ t: 'done', summary: {} })
    })
  }

  /** The absolute path of `path` (checked by the codec), refusing one under a symlink. */
  async #abs(path: string): Promise<string> {
    if (this.#knownDirs.has(parentOf(path))) return join(this.d.root, path)
    return resolveInside(this.d.root, path)
  }

  /** Makes the parent directory when the list did not (it always lists parents first; this is
   *  a safety net), and then knows it. */
  async #ensureParent(path: string, abs: string): Promise<void> {
    const parent = parentOf(path)
    if (this.#knownDirs.has(parent)) return
    await mkdir(dirname(abs), { recursive: true })
    await resolveInside(this.d.root, path)
    this.#knownDirs.add(parent)
  }
}
