import { DsyncError } from '../errors.js'
import { fingerprint, FileDigester } from '../hash/index.js'
import type { Chunk, ChunkedFile } from '../types.js'
import type { Cutter } from './cutter.js'

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
  const buf = new Uint8Array(bufferSizeFor(cutter.maxSize))
  let pos = 0 // start of the next chunk in buf
  let end = 0 // end of buffered data
  let offset = 0 // file offset of buf[pos]
  const need = cutter.maxSize
  for await (const input of source) {
    checkAborted(opts.signal)
    let taken = 0
    while (taken < input.length) {
      if (end === buf.length) {
        // Full: move the unconsumed tail (< need bytes, see below) to the front.
        buf.copyWithin(0, pos, end)
        end -= pos
        pos = 0
      }
      const n = Math.min(input.length - taken, buf.length - end)
      buf.set(input.subarray(taken, taken + n), end)
      end += n
      taken += n
      while (end - pos >= need) {
        const len = cutter.cut(buf, pos, end)
        yield { offset, length: len, data: buf.subarray(pos, pos + len) }
        pos += len
        offset += len
      }
    }
  }
  checkAborted(opts.signal)
  while (pos < end) {
    const len = cutter.cut(buf, pos, end)
    yield { offset, length: len, data: buf.subarray(pos, pos + len) }
    pos += len
    offset += len
  }
}

/** Chunks and fingerprints a stream, and digests the whole of it, in one pass. */
export async function chunkFile(
  source: AsyncIterable<Uint8Array>,
  cutter: Cutter,
  opts: { signal?: AbortSignal } = {},
): Promise<ChunkedFile> {
  const digester = new FileDigester()
  const chunks: Chunk[] = []
  let size = 0
  for await (const span of chunkStream(source, cutter, opts)) {
    digester.update(span.data)
    chunks.push({ offset: span.offset, length: span.length, fp: fingerprint(span.data) })
    size += span.length
  }
  return { size, digest: digester.digest(), chunks }
}

/** Chunks bytes already in memory (tests, small inputs). */
export function chunkBytes(data: Uint8Array, cutter: Cutter): Chunk[] {
  const chunks: Chunk[] = []
  let pos = 0
  while (pos < data.length) {
    const len = cutter.cut(data, pos, Math.min(data.length, pos + Math.max(cutter.maxSize, 1)))
    chunks.push({ offset: pos, length: len, fp: fingerprint(data.subarray(pos, pos + len)) })
    pos += len
  }
  return chunks
}
