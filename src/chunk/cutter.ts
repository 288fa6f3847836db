/**
 * A cutter finds where the next chunk ends. Pure: no state between calls, so a cut point is a
 * function of the bytes from the chunk's start alone, whatever buffers they arrived in.
 */
export interface Cutter {
  /** No chunk is longer than this (bytes). The stream keeps at least this much look-ahead. */
  readonly maxSize: number
  /**
   * Length of the chunk starting at `buf[start]`. `buf[start..end)` holds at least `maxSize`
   * bytes, or everything left in the file when fewer remain. Returns 1..end-start.
   */
  cut(buf: Uint8Array, start: number, end: number): number
}
