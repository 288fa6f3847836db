import { DsyncError } from '../errors.js'
import { fingerprint, fingerprintOfWhole, FileDigester, type FileDigest } from '../hash/index.js'
import type { Chunk, ChunkedFile } from '../types.js'
import type { Cutter } from './cutter.js'
import { isBulkCutter } from './bulk-cutter.js'

/** One chunk as it streams by. `data` is a view into the stream's buffer: valid only until the
 *  next iteration (copy it to keep it). */
export interface ChunkSpan {
  readonly offset: number
  readonly length: number
  readonly data: Uint8Array
}

/** The stream's working buffer: at least 4 MiB so refills are rare, and at least twice the
 *  largest chunk so a full chunk of look-ahead always fits after compaction. */
function bufferSizeFor(maxSize: number): number {
  return Math.max(4 * 1024 * 1024, 2 * maxSize)
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DsyncError('ABORTED', 'chunking cancelled', { cause: signal.reason })
}

/** Most cut points found per call to the cutter (16 KiB of ends: 4096 chunks, 32 MiB at the
 *  default avg, more than one buffer fill holds). */
const CUTS_PER_BATCH = 4096

/** The chunks found in one pass over the working buffer: `buf[start, ends[0])`,
 *  `[ends[0], ends[1])`, … up to `ends[count - 1]`; the first starts at file offset `offset`.
 *  Valid until the next iteration (the buffer and `ends` are reused). */
interface CutBatch {
  readonly buf: Uint8Array
  readonly start: number
  readonly offset: number
  readonly ends: Int32Array
  readonly count: number
}

/** Cut points for `buf[start, end)` in one call, through the cutter's bulk entry point when it
 *  has one (CDC), else by calling `cut` once per chunk with the same look-ahead rule. */
function batchCutter(cutter: Cutter): (buf: Uint8Array, start: number, end: number, final: boolean, ends: Int32Array) => number {
  if (isBulkCutter(cutter)) return (buf, start, end, final, ends) => cutter.cutMany(buf, start, end, final, ends)
  const need = cutter.maxSize
  return (buf, start, end, final, ends) => {
    let count = 0
    let pos = start
    while (count < ends.length && pos < end && (final || end - pos >= need)) {
      pos += cutter.cut(buf, pos, end)
      ends[count++] = pos
    }
    return count
  }
}

/**
 * The engine under chunkStream and chunkFile: copies the source into one working buffer and
 * cuts, in batches, every chunk that is decided (a cut is decided once `maxSize` bytes of
 * look-ahead are buffered, or the input has ended), so the chunks are the same for any split
 * of the input into buffers. Memory: the working buffer and the batch, whatever the length.
 */
async function* cutBatches(
  source: AsyncIterable<Uint8Array>,
  cutter: Cutter,
  signal: AbortSignal | undefined,
): AsyncGenerator<CutBatch> {
  const buf = new Uint8Array(bufferSizeFor(cutter.maxSize))
  const ends = new Int32Array(CUTS_PER_BATCH)
  const cutMany = batchCutter(cutter)
  let pos = 0 // start of the next chunk in buf
  let end = 0 // end of buffered data
  let offset = 0 // file offset of buf[pos]
  for await (const input of source) {
    checkAborted(signal)
    let taken = 0
    while (taken < input.length) {
      if (end === buf.length) {
        // Full: move the unconsumed tail (< maxSize bytes, as every decided cut was taken)
        // to the front.
        buf.copyWithin(0, pos, end)
        end -= pos
        pos = 0
      }
      const n = Math.min(input.length - taken, buf.length - end)
      buf.set(input.subarray(taken, taken + n), end)
      end += n
      taken += n
      for (let count = cutMany(buf, pos, end, false, ends); count > 0; count = cutMany(buf, pos, end, false, ends)) {
        yield { buf, start: pos, offset, ends, count }
        const next = ends[count - 1]!
        offset += next - pos
        pos = next
      }
    }
  }
  checkAborted(signal)
  while (pos < end) {
    const count = cutMany(buf, pos, end, true, ends)
    yield { buf, start: pos, offset, ends, count }
    const next = ends[count - 1]!
    offset += next - pos
    pos = next
  }
}

/**
 * Cuts a byte stream into chunks, in memory bounded by 2 × max(4 MiB, 2 × maxSize) whatever
 * the stream's length. The source may yield buffers of any sizes (and may reuse them between
 * yields: each one is copied before the next is asked for); the chunks are the same as for
 * the whole input at once, because a cut is decided only once `maxSize` bytes of look-ahead
 * are buffered, or the input has ended.
 */
export async function* chunkStream(
  source: AsyncIterable<Uint8Array>,
  cutter: Cutter,
  opts: { signal?: AbortSignal } = {},
): AsyncGenerator<ChunkSpan> {
  for await (const { buf, start, offset, ends, count } of cutBatches(source, cutter, opts.signal)) {
    let pos = start
    for (let j = 0; j < count; j++) {
      const next = ends[j]!
      yield { offset: offset + (pos - start), length: next - pos, data: buf.subarray(pos, next) }
      pos = next
    }
  }
}

/** Passes a stream through, feeding each buffer to `digester` before it is handed on (so
 *  before the source may reuse it). */
async function* digesting(source: AsyncIterable<Uint8Array>, digester: FileDigester): AsyncGenerator<Uint8Array> {
  for await (const input of source) {
    digester.update(input)
    yield input
  }
}

/**
 * Chunks and fingerprints a stream, and digests the whole of it, in one pass. The digest is
 * fed the source's own buffers (1 MiB from a file) rather than each chunk: fewer, larger
 * SHA-256 updates (bench/hash.ts "whole-file digest" table). Fingerprints are taken batch by
 * batch, without a promise per chunk.
 */
export async function chunkFile(
  source: AsyncIterable<Uint8Array>,
  cutter: Cutter,
  opts: { signal?: AbortSignal } = {},
): Promise<ChunkedFile> {
  const digester = new FileDigester()
  const { chunks, size } = await collectChunks(digesting(source, digester), cutter, opts.signal)
  return { size, digest: digester.digest(), chunks }
}

/** Chunks and fingerprints a stream without the whole-file digest: for a caller that already
 *  has it (the receiver, which verified the file it just wrote), one SHA-256 pass less. */
export async function chunkList(
  source: AsyncIterable<Uint8Array>,
  cutter: Cutter,
  opts: { signal?: AbortSignal } = {},
): Promise<Chunk[]> {
  return (await collectChunks(source, cutter, opts.signal)).chunks
}

async function collectChunks(
  source: AsyncIterable<Uint8Array>,
  cutter: Cutter,
  signal: AbortSignal | undefined,
): Promise<{ chunks: Chunk[]; size: number }> {
  const chunks: Chunk[] = []
  let size = 0
  for await (const { buf, start, offset, ends, count } of cutBatches(source, cutter, signal)) {
    let pos = start
    for (let j = 0; j < count; j++) {
      const next = ends[j]!
      chunks.push({ offset: offset + (pos - start), length: next - pos, fp: fingerprint(buf.subarray(pos, next)) })
      pos = next
    }
    size = offset + (pos - start)
  }
  return { chunks, size }
}

/** chunkBytes' cut points, reused: it runs to the end without yielding, and most files it
 *  chunks are small (a new 16 KiB array for each of 20,000 files of ~1.8 KiB was 320 MB of
 *  zeroed memory, outside the heap, for the collector to answer). */
const bytesEnds = new Int32Array(CUTS_PER_BATCH)

/**
 * Chunks bytes already in memory (small files, tests). `digest`, when known, is the bytes'
 * SHA-256 (a FileDigest): a file that is one chunk, as most small files are, has its
 * fingerprint in it (fingerprintOfWhole), and is not hashed again.
 */
export function chunkBytes(data: Uint8Array, cutter: Cutter, digest?: FileDigest): Chunk[] {
  const chunks: Chunk[] = []
  const ends = bytesEnds
  const cutMany = batchCutter(cutter)
  let pos = 0
  while (pos < data.length) {
    const count = cutMany(data, pos, data.length, true, ends)
    for (let j = 0; j < count; j++) {
      const next = ends[j]!
      const whole = pos === 0 && next === data.length && digest !== undefined
      chunks.push({ offset: pos, length: next - pos, fp: whole ? fingerprintOfWhole(digest) : fingerprint(data.subarray(pos, next)) })
      pos = next
    }
  }
  return chunks
}
