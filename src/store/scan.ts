import { lstat } from 'node:fs/promises'
import { join } from 'node:path'
import type { ChunkParams } from '../chunk/index.js'
import { type DsyncError, isDsyncError } from '../errors.js'
import { chunkPath, fsError, type TreeEntry, walkTree } from '../fs/index.js'
import type { FileRecord } from './record-codec.js'
import type { Store } from './state-store.js'

/** A walked entry; a file also carries its (now current) record. */
export type ScannedEntry = TreeEntry & { readonly record?: FileRecord }

/** What scanTree found and what it cost. */
export interface ScanResult {
  readonly entries: ScannedEntry[]
  /** Files whose content was read (new, changed, racy, or all with `checksum`). */
  readonly filesRead: number
  readonly bytesRead: number
}

/**
 * How close to the moment of reading an mtime must be for the record to be "racy" (re-read next
 * scan): a file edited again within the same timestamp tick keeps its mtime (and maybe its size),
 * and the quick check would miss the edit. Linux stamps files from a coarse clock (1–10 ms per
 * tick); 20 ms covers it. Filesystems with whole-second mtimes (FAT, HFS+, some network mounts)
 * need 2 s: an mtime on a whole second is taken as one of those.
 */
const RACY_WINDOW_MS = 20
const RACY_WINDOW_COARSE_MS = 2000

/** Puts issued before their transactions are awaited: lmdb-js commits all pending ones at once
 *  (one fsync), so awaiting each put alone would cost one commit per file. */
const PUT_BATCH = 512

function isRacy(mtimeMs: number, readAtMs: number): boolean {
  const window = mtimeMs % 1000 === 0 ? RACY_WINDOW_COARSE_MS : RACY_WINDOW_MS
  return readAtMs - mtimeMs < window
}

/**
 * Walks root and brings the store up to date: files whose size+mtime match their record are NOT
 * read (the no-op fast path), unless `checksum`; changed/new files are chunked (chunkPath with
 * params) and recorded; records of vanished (or now excluded) files deleted. Returns the
 * entries, each file with its record, and stats. Per-file failures go to `onError` when given
 * (the file is left out of the entries), else they are thrown.
 */
export async function scanTree(
  root: string,
  store: Store,
  opts: {
    params: ChunkParams
    exclude?: readonly string[]
    checksum?: boolean
    signal?: AbortSignal
    onFile?: (path: string, bytes: number) => void
    onError?: (err: DsyncError) => void
  },
): Promise<ScanResult> {
  const entries: ScannedEntry[] = []
  const seen = new Set<string>()
  let filesRead = 0
  let bytesRead = 0
  let pending: Promise<void>[] = []
  const flush = async () => {
    const batch = pending
    pending = []
    await Promise.all(batch)
  }
  const walkOpts = { exclude: opts.exclude ?? [], ...(opts.signal && { signal: opts.signal }), ...(opts.onError && { onError: opts.onError }) }

  for await (const entry of walkTree(root, walkOpts)) {
    if (entry.kind !== 'file') {
      entries.push(entry)
      continue
    }
    seen.add(entry.path)
    const known = store.lookup(entry.path)
    if (known !== undefined && !opts.checksum && !known.racy && known.record.size === entry.size && known.record.mtimeMs === entry.mtimeMs) {
      let record = known.record
      if (record.mode !== entry.mode) {
        record = { ...record, mode: entry.mode }
        pending.push(store.put(record))
      }
      entries.push({ ...entry, record })
    } else {
      const read = await readFile(root, entry, opts)
      if (read === undefined) {
        seen.delete(entry.path)
        continue
      }
      filesRead++
      bytesRead += read.record.size
      opts.onFile?.(entry.path, read.record.size)
      pending.push(store.put(read.record, { racy: read.racy }))
      entries.push({ ...entry, size: read.record.size, record: read.record })
    }
    if (pending.length >= PUT_BATCH) await flush()
  }
  for (const path of store.recordPaths()) if (!seen.has(path)) pending.push(store.delete(path))
  await flush()
  return { entries, filesRead, bytesRead }
}

/** Chunks one file; the record is racy when the file changed while being read or just before. */
async function readFile(
  root: string,
  entry: TreeEntry,
  opts: { params: ChunkParams; signal?: AbortSignal; onError?: (err: DsyncError) => void },
): Promise<{ record: FileRecord; racy: boolean } | undefined> {
  const abs = join(root, entry.path)
  const readAtMs = Date.now()
  try {
    const chunked = await chunkPath(abs, opts.params, opts.signal ? { signal: opts.signal } : {})
    const after = await lstat(abs)
    const changed = after.size !== chunked.size || after.mtimeMs !== entry.mtimeMs
    const record: FileRecord = { path: entry.path, mtimeMs: entry.mtimeMs, mode: entry.mode, ...chunked }
    return { record, racy: changed || isRacy(entry.mtimeMs, readAtMs) }
  } catch (err) {
    const e = isDsyncError(err) ? err : fsError(err, entry.path, 'read it')
    // Vanished between the walk and the read: no longer part of the tree.
    if (e.code === 'NOT_FOUND') return undefined
    if (e.code === 'ABORTED' || opts.onError === undefined) throw e
    opts.onError(e)
    return undefined
  }
}
