import { DsyncError } from '../errors.js'
import { fingerprint, rollingSum, rollSum } from '../hash/index.js'
import type { Chunk } from '../types.js'
import { BlockTable } from './block-table.js'

/**
 * Slide-block chunking (SBC), the seed's third scheme (block-similarity-bsim-zh.txt): blocks of
 * a fixed size found at any byte offset. A rolling sum slides one byte at a time; wherever the
 * window is a known block, the bytes before it become a short "gap" chunk and the block is cut
 * out whole. A gap that grows to a full block is cut as a block and becomes known itself
 * ("earlier in this one"). SBC is relative: chunk the base with `sbcBaseChunks`, which fills
 * the table, then the other file with `sbcChunks` against it.
 */

/** FSP-chunks the base file and registers each full block in `table`. */
export async function sbcBaseChunks(
  source: AsyncIterable<Uint8Array>,
  table: BlockTable,
  opts: { signal?: AbortSignal } = {},
): Promise<Chunk[]> {
  const n = table.blockSize
  const chunks: Chunk[] = []
  const block = new Uint8Array(n)
  let filled = 0
  let offset = 0
  const flush = (len: number): void => {
    const data = block.subarray(0, len)
    const fp = len === n ? table.addBlock(data) : fingerprint(data)
    chunks.push({ offset, length: len, fp })
    offset += len
    filled = 0
  }
  for await (const input of source) {
    if (opts.signal?.aborted) throw new DsyncError('ABORTED', 'chunking cancelled')
    let taken = 0
    while (taken < input.length) {
      const k = Math.min(n - filled, input.length - taken)
      block.set(input.subarray(taken, taken + k), filled)
      filled += k
      taken += k
      if (filled === n) flush(n)
    }
  }
  if (filled > 0) flush(filled)
  return chunks
}

/** SBC-chunks a stream against the blocks in `table` (which it extends), in memory bounded by
 *  a few block sizes plus the input buffers. */
export async function sbcChunks(
  source: AsyncIterable<Uint8Array>,
  table: BlockTable,
  opts: { signal?: AbortSignal } = {},
): Promise<Chunk[]> {
  const n = table.blockSize
  const chunks: Chunk[] = []
  const buf = new Uint8Array(Math.max(4 * n, 1 << 20))
  let pos = 0 // start of the pending gap
  let i = 0 // start of the window [i, i + n)
  let end = 0
  let base = 0 // file offset of buf[0]
  let sum = -1 // rolling sum of the window, -1 when it must be recomputed
  const emit = (start: number, len: number, fp = fingerprint(buf.subarray(start, start + len))): void => {
    chunks.push({ offset: base + start, length: len, fp })
  }
  const scan = (): void => {
    while (i + n <= end) {
      if (sum < 0) sum = rollingSum(buf, i, i + n)
      const fp = table.match(sum, buf, i)
      if (fp !== undefined) {
        if (i > pos) emit(pos, i - pos)
        emit(i, n, fp)
        i += n
        pos = i
        sum = -1
        continue
      }
      if (i - pos === n) {
        emit(pos, n, table.addBlock(buf.subarray(pos, pos + n)))
        pos = i
      }
      if (i + n < end) sum = rollSum(sum, n, buf[i]!, buf[i + n]!)
      else sum = -1
      i++
    }
  }
  for await (const input of source) {
    if (opts.signal?.aborted) throw new DsyncError('ABORTED', 'chunking cancelled')
    let taken = 0
    while (taken < input.length) {
      if (end === buf.length) {
        buf.copyWithin(0, pos, end)
        base += pos
        i -= pos
        end -= pos
        pos = 0
      }
      const k = Math.min(input.length - taken, buf.length - end)
      buf.set(input.subarray(taken, taken + k), end)
      end += k
      taken += k
      scan()
    }
  }
  // The tail: fewer than n bytes after the last window start. Cut the gap into blocks.
  while (end - pos > 0) {
    const len = Math.min(n, end - pos)
    emit(pos, len)
    pos += len
  }
  return chunks
}
