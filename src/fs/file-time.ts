/**
 * The modification time to hand utimes() (seconds: a double, or its decimal string before 1970)
 * for `mtimeMs` (ms since the epoch), such that the file reads back in the same millisecond.
 *
 * Node passes seconds as a double and libuv truncates to the microsecond, so a time reads back
 * up to ~1.3 µs below the one set (measured here: 9,612 of 20,000 random times came back
 * different, by at most 1.22 µs; the double itself carries ±0.24 µs at today's dates). A time
 * in the first microseconds of its millisecond — every whole-second time from a tar or zip
 * archive — would then read back in the millisecond before, and the directory summaries
 * (PROTOCOL.md §4.9), which hash times to the millisecond, would differ on every sync. Such a
 * time is set 2 µs later, one at the very end of its millisecond 2 µs earlier: the same to the
 * quick check (1 ms) and to rsync (whole seconds), and stable through any number of syncs.
 */
export function stableUtime(mtimeMs: number): number | string {
  const ms = Math.floor(mtimeMs)
  const within = Math.min(Math.max(mtimeMs - ms, EDGE_MS), 1 - EDGE_MS)
  const seconds = (ms + within) / 1000
  // Node takes a negative number of seconds (a time before 1970) for "now", and a file sent
  // with one came with the time of its arrival, different on every sync; a numeric string
  // goes as it is.
  return seconds < 0 ? String(seconds) : seconds
}

/** How far from a millisecond's edges a time is set: above the ~1.3 µs a time can lose. */
const EDGE_MS = 0.002
