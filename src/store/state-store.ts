import { lstat, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Database, RootDatabase } from 'lmdb'
import type { ChunkParams } from '../chunk/index.js'
import { DsyncError } from '../errors.js'
import { requirePackage } from '../packages.js'
import { checkRelPath, comparePaths, fsError, STATE_DIR_NAME } from '../fs/index.js'
import type { Chunk, FileDigest, Fingerprint } from '../types.js'
import { type Candidate, rankCandidates } from './candidates.js'
import { ContentIndex } from './content-index.js'
import { FolderCovers, type FolderSummary } from './folder-covers.js'
import { pathKey } from './path-key.js'
import { type FileRecord, decodeRecord, decodeRecordMeta, encodeRecord } from './record-codec.js'
import { SketchIndex } from './sketch-index.js'
import { baseHasStat, decodeBase, encodeBase, type SyncBase } from './sync-base.js'
import { PairBases } from './pair-bases.js'

/** File of the lmdb environment inside `<root>/.dsync/` (lmdb adds `state.mdb-lock` beside it). */
export const STORE_FILE_NAME = 'state.mdb'

/** Bump when the layout of any database changes: a store of another schema is rebuilt. */
const SCHEMA = 1
/** meta key: the generation of the bases' covers (FolderCovers) */
const BASES_COVER_KEY = 'basesCover'
function storeError(dir: string, doing: string, cause: unknown): DsyncError {
  const why = cause instanceof Error ? cause.message : String(cause)
  const what = `${dir}: cannot ${doing} the state store: ${why}`
  return new DsyncError('IO', `${what}; check permissions and free space, or delete ${dir} to rebuild it`, {
    path: dir,
    cause,
  })
}

/** Creates `<root>/.dsync` if needed, refusing one that is a symlink or not a directory. */
async function stateDir(root: string): Promise<string> {
  const dir = join(root, STATE_DIR_NAME)
  try {
    await mkdir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError(err, dir, 'create the state folder')
  }
  const st = await lstat(dir).catch((err: unknown) => {
    throw fsError(err, dir, 'check the state folder')
  })
  if (!st.isDirectory()) {
    throw new DsyncError('UNSAFE_PATH', `${dir}: the state folder is a symlink or not a directory; remove it and run again`, { path: dir })
  }
  return dir
}

/** What `put` also does: `racy` and `base` (see put). */
interface PutOptions {
  readonly racy?: boolean
  readonly base?: boolean
}

/** Records put one after another, written in one transaction (put). */
interface PutBatch {
  readonly recs: [FileRecord, PutOptions][]
  /** its transaction has begun: too late to join */
  begun: boolean
  done: Promise<void>
}

/**
 * One root's state, in `<root>/.dsync/` (lmdb: embedded, crash-safe, multi-process): a record
 * per file (size, mtime, mode, digest, chunks), the digest each path last synced (conflict
 * detection), and the content index (sampled fingerprints → files; digests → files).
 *
 * Every write is one lmdb transaction covering the record and its index entries, so a crash
 * (or an error half-way) leaves both as before or both as after. Two processes on one root are
 * safe (lmdb's lock file serializes writers). Within one process, opening the same root several
 * times is safe too: lmdb-js shares one native environment per path (test/store/state-store.ts
 * checks that writes through one Store are seen by another and that closing one leaves the
 * other working).
 */
export class Store {
  readonly #dir: string
  readonly #env: RootDatabase
  readonly #meta: Database<string | number, string>
  readonly #records: Database<Buffer, Buffer>
  readonly #paths: Database<string, number>
  readonly #bases: Database<Buffer, Buffer>
  readonly #covers: FolderCovers
  readonly #index: ContentIndex
  #sketches: SketchIndex | undefined
  #pairBases: PairBases | undefined
  /** puts waiting for their transaction, which later puts may still join (put) */
  #puts: PutBatch | undefined

  private constructor(dir: string, env: RootDatabase) {
    this.#dir = dir
    this.#env = env
    this.#meta = env.openDB({ name: 'meta' })
    this.#records = env.openDB({ name: 'records', keyEncoding: 'binary', encoding: 'binary' })
    this.#paths = env.openDB({ name: 'paths', keyEncoding: 'uint32', encoding: 'string' })
    this.#bases = env.openDB({ name: 'bases', keyEncoding: 'binary', encoding: 'binary' })
    this.#covers = new FolderCovers(env.openDB({ name: 'base-covers', keyEncoding: 'binary', encoding: 'string' }), this.#meta, BASES_COVER_KEY)
    this.#index = new ContentIndex(
      env.openDB({ name: 'fingerprints', keyEncoding: 'binary', dupSort: true, encoding: 'ordered-binary' }),
      env.openDB({ name: 'digests', keyEncoding: 'binary', dupSort: true, encoding: 'ordered-binary' }),
    )
  }

  /**
   * Opens (creating if needed) the store of `root`. Records and the content index hold chunk
   * lists, which depend on the chunk params: when `params` differ from the ones the store was
   * built with, they are dropped (files get re-read on the next scan); bases are kept.
   */
  static async open(root: string, opts: { params: ChunkParams }): Promise<Store> {
    const dir = await stateDir(root)
    let store: Store
    try {
      // Loaded here, not at startup (see LAZY_LOAD in src/cli/main.ts), and as CommonJS (packages.ts).
      const { open } = requirePackage('lmdb') as typeof import('lmdb')
      store = new Store(dir, open({ path: join(dir, STORE_FILE_NAME), maxDbs: 16, compression: false }))
    } catch (err) {
      throw storeError(dir, 'open', err)
    }
    try {
      await store.#resetIfStale(opts.params)
    } catch (err) {
      await store.close()
      throw storeError(dir, 'prepare', err)
    }
    return store
  }

  async #resetIfStale(params: ChunkParams): Promise<void> {
    const key = JSON.stringify({ schema: SCHEMA, kind: params.kind, min: params.min, avg: params.avg, max: params.max })
    if (this.#meta.get('layout') === key) return
    // Checked again inside the transaction: another handle (this process or another) may have
    // reset the store meanwhile and already written records that must not be wiped.
    await this.#env.childTransaction(() => {
      if (this.#meta.get('layout') === key) return
      this.#records.clearSync()
      this.#paths.clearSync()
      this.#index.clear()
      if (this.#meta.get('schema') !== SCHEMA) this.#bases.clearSync()
      this.#covers.clear()
      this.#meta.put('schema', SCHEMA)
      this.#meta.put('layout', key)
    })
  }

  /** Closes this handle (other handles on the same root stay open). */
  async close(): Promise<void> {
    await this.#env.close()
  }

  /** The record of `path`, current or not, or undefined. Synchronous: one lmdb read. */
  get(path: string): FileRecord | undefined {
    const buf = this.#records.get(pathKey(path))
    return buf === undefined ? undefined : decodeRecord(path, buf).record
  }

  /**
   * Records a file and updates the content index, in one transaction (shared with the puts
   * made with it, below: one failing fails them all). `racy`: the content was
   * read so close to its mtime that a later same-size edit might not change the mtime; the next
   * scan then re-reads it (git's "racy clean" problem). `base`: also record `rec.digest` as the
   * path's base in the same transaction (what setBase does), one commit instead of two:
   * awaited one by one, a put or a setBase costs ~0.9 ms each here (load ~10 on 2 cores),
   * while 2,000 concurrent puts share commits at ~0.26 ms each.
   */
  async put(rec: FileRecord, opts: PutOptions = {}): Promise<void> {
    checkRelPath(rec.path)
    // Joins the transaction of the puts before it while that has not begun and no other write
    // came since (so writes to one path keep their order): a first push of 20,000 small files
    // put one record per file, each its own nested transaction (20,000 records put 64 at a
    // time, by hand: 1.64–1.81 CPU s one transaction each, 1.40–1.49 s batched so).
    const open = this.#puts
    if (open !== undefined && !open.begun) {
      open.recs.push([rec, opts])
      return open.done
    }
    const batch: PutBatch = { recs: [[rec, opts]], begun: false, done: Promise.resolve() }
    batch.done = this.#write('record', () => (batch.recs.length === 1 ? rec.path : `${batch.recs.length} files`), () => {
      batch.begun = true
      // The batch's new ids and the covers its bases void, written once for all of it: per
      // record, the id counter was read and written and every folder above it uncovered (the
      // root's cover removed 20,000 times on a first push of 20,000 files).
      const ids = { next: Number(this.#meta.get('nextId') ?? 1) }
      const first = ids.next
      const based: string[] = []
      for (const [r, o] of batch.recs) if (this.#putIn(r, o, ids)) based.push(r.path)
      if (ids.next !== first) this.#meta.put('nextId', ids.next)
      this.#covers.uncover(based)
    })
    this.#puts = batch
    return batch.done
  }

  /** put's body: inside a write transaction, `ids.next` the next new file's id (taken here
   *  and moved on). True when it wrote a base (whose folders' covers the caller voids). */
  #putIn(rec: FileRecord, opts: PutOptions, ids: { next: number }): boolean {
    const key = pathKey(rec.path)
    const oldBuf = this.#records.get(key)
    let id: number
    if (oldBuf !== undefined) {
      const old = decodeRecord(rec.path, oldBuf)
      id = old.id
      // Same digest under the same params means the same chunks: only metadata changed.
      if (old.record.digest !== rec.digest) {
        this.#index.remove(id, old.record.digest, old.record.chunks)
        this.#index.add(id, rec.digest, rec.chunks)
      }
    } else {
      id = ids.next++
      this.#paths.put(id, rec.path)
      this.#index.add(id, rec.digest, rec.chunks)
    }
    this.#records.put(key, encodeRecord(rec, id, opts.racy === true))
    if (opts.base !== true) return false
    this.#bases.put(key, encodeBase({ digest: rec.digest, size: rec.size, mtimeMs: rec.mtimeMs }))
    return true
  }

  /** Forgets the record of `path` and its index entries (its base stays). No-op when absent. */
  delete(path: string): Promise<void> {
    const key = pathKey(path)
    return this.#write('record', path, () => {
      const buf = this.#records.get(key)
      if (buf === undefined) return
      const old = decodeRecord(path, buf)
      this.#index.remove(old.id, old.record.digest, old.record.chunks)
      this.#paths.remove(old.id)
      this.#records.remove(key)
    })
  }

  /**
   * The record of `path` if it is current: recorded at this size and mtime, and not racy. One
   * lmdb read; the chunk list is decoded only then (a 1 GiB file's is 131,072 chunks, and a
   * stale one is of no use).
   */
  current(path: string, at: { readonly size: number; readonly mtimeMs: number }): FileRecord | undefined {
    const buf = this.#records.get(pathKey(path))
    if (buf === undefined) return undefined
    const meta = decodeRecordMeta(path, buf)
    if (meta.racy || meta.size !== at.size || meta.mtimeMs !== at.mtimeMs) return undefined
    return decodeRecord(path, buf).record
  }


  /** What this root last synced at `path` (set when a file is received, or found the same as
   *  the sender's): conflict detection and --delete. */
  getBase(path: string): SyncBase | undefined {
    const buf = this.#bases.get(pathKey(path))
    return buf === undefined ? undefined : decodeBase(path, buf)
  }

  /** Whether `path`'s base has `v`'s size and mtime (isBase by the quick check alone). */
  baseHasStat(path: string, v: { readonly size: number; readonly mtimeMs: number }): boolean {
    const buf = this.#bases.get(pathKey(path))
    return buf !== undefined && baseHasStat(buf, v)
  }

  /** setBase for many paths, in one transaction; then, in it too, notes the `covers` of folders
   *  whose every base is now seen to (see covered): one commit where two took the tree's lock
   *  longer after a session (the next push waited for it in the demo's back-to-back pushes). */
  async setBases(bases: readonly (readonly [string, SyncBase])[], covers: readonly FolderSummary[] = []): Promise<void> {
    for (const [path] of bases) checkRelPath(path)
    if (bases.length === 0 && covers.length === 0) return
    return this.#write('base', `${bases.length} files`, () => {
      for (const [path, base] of bases) this.#bases.put(pathKey(path), encodeBase(base))
      this.#covers.uncover(bases.map(([path]) => path))
      if (covers.length > 0) this.#covers.cover(covers)
    })
  }

  async setBase(path: string, base: SyncBase): Promise<void> {
    checkRelPath(path)
    return this.#write('base', path, () => {
      this.#bases.put(pathKey(path), encodeBase(base))
      this.#covers.uncover([path])
    })
  }

  deleteBase(path: string): Promise<void> {
    return this.#write('base', path, () => {
      this.#bases.remove(pathKey(path))
      this.#covers.uncover([path])
    })
  }

  /** Whether every file under `dir` ('' the root) had its base at its size and mtime when the
   *  folder's summary (§4.9) was `summary` (setBases' covers), with none written since
   *  (FolderCovers). A session that finds `dir` the same as its sender's, so, has no base under
   *  it to record. */
  covered(dir: string, summary: Uint8Array): boolean {
    return this.#covers.covered(dir, summary)
  }

  /** Paths (current records) whose whole content has this digest, in comparePaths order. Exact. */
  findByDigest(digest: FileDigest): string[] {
    const paths: string[] = []
    for (const id of this.#index.idsWithDigest(digest)) {
      const p = this.#paths.get(id)
      if (p !== undefined) paths.push(p)
    }
    return paths.sort(comparePaths)
  }

  /**
   * Files sharing content with `chunks`, best first, by estimated containment (the share of the
   * target's bytes the file can supply, 0..1) from the sampled index; see rankCandidates.
   * `limit` default 8. Excludes `opts.exclude` paths.
   */
  candidates(chunks: readonly Chunk[], opts: { limit?: number; exclude?: readonly string[] } = {}): Candidate[] {
    const source = { idsWithFingerprint: (fp: Fingerprint) => this.#index.idsWithFingerprint(fp), pathOf: (id: number) => this.#paths.get(id) }
    return rankCandidates(chunks, source, opts)
  }

  /** Paths (current records) holding a sampled fingerprint that starts with one of `prefixes`
   *  (a probe's keys, PROTOCOL.md §4.6). Unordered. */
  filesWithFingerprintPrefix(prefixes: readonly Uint8Array[]): Set<string> {
    const paths = new Set<string>()
    for (const prefix of prefixes) {
      for (const id of this.#index.idsWithFingerprintPrefix(prefix)) {
        const p = this.#paths.get(id)
        if (p !== undefined) paths.add(p)
      }
    }
    return paths
  }

  /** What this root last synced with each peer replica (two-way sync), and its own replica id. */
  pairBases(): PairBases {
    return (this.#pairBases ??= new PairBases(this.#env))
  }

  /** The similarity index of this root (`dsync similar`, `dsync groups`), in its own databases. */
  sketchIndex(): SketchIndex {
    return (this.#sketches ??= new SketchIndex(this.#env))
  }

  /** Every path that has a record (unordered). */
  recordPaths(): string[] {
    return [...this.#paths.getRange().map(({ value }) => value)]
  }

  /**
   * Runs `body` as one atomic write. A child transaction, not lmdb-js's plain async
   * `transaction`: a plain one that throws half-way still commits what it wrote before the
   * throw (checked with lmdb 3.5.6), a child one rolls back. Cost: 20,000 concurrent puts took
   * 0.38–0.51 s against 0.29–0.32 s.
   */
  async #write(what: string, path: string | (() => string), body: () => void): Promise<void> {
    // A write after puts still waiting comes after them: later puts wait for the next batch.
    this.#puts = undefined
    try {
      await this.#env.childTransaction(body)
    } catch (err) {
      if (err instanceof DsyncError) throw err
      throw storeError(this.#dir, `write the ${what} of ${typeof path === 'function' ? path() : path} to`, err)
    }
  }
}
