import { DsyncError } from '../errors.js'
import type { SeedReader } from './apply-delta.js'

/** A run of bytes of a file: `length` bytes from `offset`. */
export interface ByteRange {
  readonly offset: number
  readonly length: number
}

/** One piece of a range read by readRanges: `bytes` are the range's from `offset + at`. */
export interface RangePiece {
  /** the range's index in the ranges given */
  readonly range: number
  /** where the piece starts in its range */
  readonly at: number
  readonly bytes: Uint8Array
  /** the range's last piece */
  readonly last: boolean
}

/** Options of readRanges. */
export interface ReadRangesOptions {
  /** a range is read in pieces of at most this many bytes (default: each range in one read) */
  readonly piece?: number
  /** bytes of reads started ahead of the one being taken (default READ_AHEAD_BYTES); one read
   *  is always started, whatever its size */
  readonly aheadBytes?: number
  readonly signal?: AbortSignal
}

/**
 * Reads started ahead of the one taken, at most: each read is a trip through libuv's thread
 * pool (~0.2 ms here even from the page cache), and a refinement round of 100 small holes paid
 * them one after the other: 20.7 of the round's 31.6 ms on the sender (50 MiB, 100 × 64 B
 * overwrites, by hand). 32 keep the pool's 16 threads busy (bin/dsync.js sets the pool's size).
 */
const READ_AHEAD_COUNT = 32

/** Bytes read ahead at most: bounds what the reads started hold while the taker catches up. */
const READ_AHEAD_BYTES = 8 * 1024 * 1024

/**
 * The bytes of `ranges` from `reader`, in order, in pieces of at most `opts.piece` bytes, with
 * up to READ_AHEAD_COUNT reads (and READ_AHEAD_BYTES) started ahead of the piece taken. The reader
 * must allow reads in flight together (a SeedReader that does not reuse its buffers). On an
 * early return or an error, the reads already started are waited for before the generator ends,
 * so that the caller may close the reader once it has: nothing reads after.
 */
export async function* readRanges(reader: SeedReader, ranges: readonly ByteRange[], opts: ReadRangesOptions = {}): AsyncGenerator<RangePiece> {
  const pieceBytes = opts.piece ?? Infinity
  const aheadBytes = opts.aheadBytes ?? READ_AHEAD_BYTES
  const started: { piece: Omit<RangePiece, 'bytes'>; length: number; read: Promise<Uint8Array> }[] = []
  let inFlight = 0
  let r = 0
  let at = 0
  const startNext = (): boolean => {
    while (r < ranges.length && ranges[r]!.length === 0) r++
    if (r >= ranges.length) return false
    const range = ranges[r]!
    const length = Math.min(pieceBytes, range.length - at)
    const read = reader.read(range.offset + at, length)
    // Handled when taken; until then a failure must not count as unhandled.
    read.catch(() => undefined)
    started.push({ piece: { range: r, at, last: at + length === range.length }, length, read })
    inFlight += length
    at += length
    if (at === range.length) {
      r++
      at = 0
    }
    return true
  }
  try {
    for (;;) {
      // Checked before any read starts: an abort leaves only what was in flight to wait for.
      if (opts.signal?.aborted) throw new DsyncError('ABORTED', 'reading cancelled', { cause: opts.signal.reason })
      while ((started.length === 0 || (started.length < READ_AHEAD_COUNT && inFlight < aheadBytes)) && startNext());
      const next = started.shift()
      if (next === undefined) return
      const bytes = await next.read
      inFlight -= next.length
      yield { ...next.piece, bytes }
    }
  } finally {
    await Promise.allSettled(started.map((s) => s.read))
  }
}
