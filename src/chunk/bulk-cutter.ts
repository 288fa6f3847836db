import type { Cutter } from './cutter.js'

/**
 * A cutter that can also find many cut points in one call. chunkStream uses it when offered:
 * one call per buffer fill instead of one per chunk lets CDC run its whole search in one
 * tight loop (or one WebAssembly call), which is where its speed comes from.
 */
export interface BulkCutter extends Cutter {
  /**
   * Cuts successive chunks from `buf[start]` on and writes each chunk's end (an index into
   * `buf`) to `ends`, at most `ends.length` of them; returns how many. Cutting stops before a
   * chunk that starts with fewer than `maxSize` bytes before `end`, unless `final` says
   * `end` is the end of the input, in which case it goes on to `end`. The cuts are exactly
   * those that repeated `cut(buf, pos, end)` calls would find.
   */
  cutMany(buf: Uint8Array, start: number, end: number, final: boolean, ends: Int32Array): number
}

/** Whether `cutter` offers the bulk entry point. */
export function isBulkCutter(cutter: Cutter): cutter is BulkCutter {
  return typeof (cutter as Partial<BulkCutter>).cutMany === 'function'
}
