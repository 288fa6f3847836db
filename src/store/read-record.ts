import { lstatSync } from 'node:fs'
import { type ChunkParams, type Cutter, chunkBytes, cutterFor } from '../chunk/index.js'
import { DsyncError, isDsyncError } from '../errors.js'
import { chunkPath, fsError, readRegular, type CheckedDirs, type TreeEntry } from '../fs/index.js'
import { digestBytes } from '../hash/index.js'
import type { ChunkedFile } from '../types.js'
import type { FileRecord } from './record-codec.js'

/**
 * How close to the moment of reading an mtime must be for the record to be "racy" (re-read next
 * scan): a file edited again within the same timestamp tick keeps its mtime (and maybe its size),
 * and the quick check would miss the edit. Linux stamps files from a coarse clock (1–10 ms per
 * tick); 20 ms covers it. Filesystems with whole-second mtimes (FAT, HFS+, some network mounts)
 * need 2 s: an mtime on a whole second is taken as one of those.
 */
const RACY_WINDOW_MS = 20
const RACY_WINDOW_COARSE_MS = 2000

function isRacy(mtimeMs: number, readAtMs: number): boolean {
  const window = mtimeMs % 1000 === 0 ? RACY_WINDOW_COARSE_MS : RACY_WINDOW_MS
  return readAtMs - mtimeMs < window
}

/**
 * Files up to this size are read whole into a buffer of their size and chunked in memory:
 * chunkPath's streaming engine allocates a 1 MiB read buffer and a 4 MiB working buffer per
 * file, and for 2,000 files of 200 B that zeroing and its garbage collection took 7.6 ms per
 * file against ~0.3 ms this way (node --cpu-prof: 4.4 s GC, 2.6 s buffer setup). Memory stays
 * bounded: at most this many bytes per file in flight, the same as the streaming read buffer.
 */
const SMALL_FILE_BYTES = 1024 * 1024

/** Chunks one file (in memory when small, streaming otherwise). */
async function chunkOne(
  abs: string,
  entry: TreeEntry,
  params: ChunkParams,
  cutter: Cutter,
  signal: AbortSignal | undefined,
): Promise<ChunkedFile & { bytes?: Uint8Array }> {
  if (entry.size <= SMALL_FILE_BYTES) {
    if (signal?.aborted) throw new DsyncError('ABORTED', `${entry.path}: scan cancelled`, { path: entry.path })
    let data: Uint8Array | undefined
    try {
      data = await readRegular(abs, entry.size, { noFollow: true })
    } catch (err) {
      throw fsError(err, entry.path, 'read it')
    }
    if (data !== undefined) {
      const digest = digestBytes(data)
      return { size: data.length, digest, chunks: chunkBytes(data, cutter, digest), bytes: data }
    }
  }
  return chunkPath(abs, params, { noFollow: true, ...(signal && { signal }) })
}

export interface ReadResult {
  readonly record: FileRecord
  readonly racy: boolean
  /** The content, when the file was small enough to be read whole: what the record describes,
   *  for a caller that sends it next (no second read, and no change in between). */
  readonly bytes?: Uint8Array
}

/**
 * Reads and chunks one file of a tree: its record (size, digest, chunks, with the entry's mtime
 * and mode). Racy when the file changed while being read or just before. Undefined when it
 * vanished since the walk; other failures go to `opts.onError` when given (then undefined),
 * else they are thrown.
 */
export async function readRecord(
  dirs: CheckedDirs,
  entry: TreeEntry,
  opts: { params: ChunkParams; cutter?: Cutter; signal?: AbortSignal; onError?: (err: DsyncError) => void },
): Promise<ReadResult | undefined> {
  const cutter = opts.cutter ?? cutterFor(opts.params)
  const readAtMs = Date.now()
  try {
    // A folder above the file that is a symlink now (it may have changed since the walk) is
    // refused: UNSAFE_PATH, as any read error.
    const abs = dirs.abs(entry.path)
    const { bytes, ...chunked } = await chunkOne(abs, entry, opts.params, cutter, opts.signal)
    const after = lstatSync(abs)
    const changed = after.size !== chunked.size || after.mtimeMs !== entry.mtimeMs
    const record: FileRecord = { path: entry.path, mtimeMs: entry.mtimeMs, mode: entry.mode, ...chunked }
    return { record, racy: changed || isRacy(entry.mtimeMs, readAtMs), ...(bytes !== undefined && { bytes }) }
  } catch (err) {
    const e = isDsyncError(err) ? err : fsError(err, entry.path, 'read it')
    // Vanished between the walk and the read: no longer part of the tree.
    if (e.code === 'NOT_FOUND') return undefined
    if (e.code === 'ABORTED' || opts.onError === undefined) throw e
    opts.onError(e)
    return undefined
  }
}
