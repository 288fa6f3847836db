/**
 * rsync's weak rolling checksum (an Adler-32 variant, rsync checksum.c get_checksum1): two
 * 16-bit sums over a window, updated in O(1) when the window slides by one byte. Used to find
 * fixed-size blocks at any byte offset (SBC chunking, the delta matcher's fallback search).
 *
 * The sum is `a | (b << 16)` as an unsigned 32-bit number. `a` = Σ x_i, `b` = Σ (n - i)·x_i.
 */
export function rollingSum(data: Uint8Array, start: number, end: number): number {
  let a = 0
  let b = 0
  const n = end - start
  for (let i = 0; i < n; i++) {
    const x = data[start + i]!
    a += x
    b += (n - i) * x
  }
  return ((a & 0xffff) | ((b & 0xffff) << 16)) >>> 0
}

/**
 * Slides a window of `n` bytes one byte on: `out` leaves, `inn` enters.
 * Returns the new sum; exact (equal to rollingSum over the new window).
 */
export function rollSum(sum: number, n: number, out: number, inn: number): number {
  const a = ((sum & 0xffff) - out + inn) & 0xffff
  const b = ((sum >>> 16) - n * out + a) & 0xffff
  return (a | (b << 16)) >>> 0
}
