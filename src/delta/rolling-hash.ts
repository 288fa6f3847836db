/**
 * The weak, rolling half of a block's checksum: a polynomial hash over a byte map,
 *   h = Σ G[x_i] · B^(n-1-i)  (mod 2^32),
 * updated in O(1) when the window slides one byte. Why not rsync's Adler-style sum
 * (src/hash rollSum): its two 16-bit sums of raw bytes cluster on text (the a-sum of 4 KiB of
 * ASCII spans a few thousand values), so its bits cannot count toward a block's identity and
 * the signature would need more strong bits per block. With random 32-bit G[x] and an odd B,
 * two different windows collide only when Σ (G[x_i] − G[y_i]) · B^j ≡ 0, and the bits we keep
 * (the top bits: every lower bit carries into them) behave as random; the signature then spends
 * fewer strong bits.
 * The table and constants are part of the signature format (protocol/DELTA.md).
 */

/** Multiplier of the polynomial (odd, so x ↦ x·B is a bijection mod 2^32). */
export const ROLL_BASE = 0x01000193

const B2 = Math.imul(ROLL_BASE, ROLL_BASE)
const B3 = Math.imul(B2, ROLL_BASE)
const B4 = Math.imul(B3, ROLL_BASE)

/** murmur3's 32-bit finalizer: a bijection that spreads every input bit over the output. */
export function fmix32(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** G[x] = fmix32((x + 1) · 0x9E3779B1): 256 well-spread 32-bit values, one per byte value. */
export const BYTE_MAP: Int32Array = (() => {
  const g = new Int32Array(256)
  for (let x = 0; x < 256; x++) g[x] = fmix32(Math.imul(x + 1, 0x9e3779b1)) | 0
  return g
})()

/** B^(n-1) mod 2^32: what a byte leaving a window of n bytes was multiplied by. */
export function outFactor(n: number): number {
  let f = 1
  for (let i = 1; i < n; i++) f = Math.imul(f, ROLL_BASE)
  return f
}

/** The raw rolling hash of `data[start..start+n)` (signed 32-bit). */
export function rollingHash(data: Uint8Array, start: number, n: number): number {
  const g = BYTE_MAP
  let h = 0
  const end = start + n
  let i = start
  // Four bytes per step: h·B^4 + (g0·B^3 + g1·B^2 + g2·B + g3). The chain through h is one
  // multiply per 4 bytes instead of per byte: 93 → ~65 ms CPU per 20 MB here (loaded machine).
  for (; i + 4 <= end; i += 4) {
    const t =
      (Math.imul(g[data[i]!]!, B3) + Math.imul(g[data[i + 1]!]!, B2) + Math.imul(g[data[i + 2]!]!, ROLL_BASE) + g[data[i + 3]!]!) | 0
    h = (Math.imul(h, B4) + t) | 0
  }
  for (; i < end; i++) h = (Math.imul(h, ROLL_BASE) + g[data[i]!]!) | 0
  return h
}

/** Slides the window one byte: `out` leaves (it was multiplied by `outF` = outFactor(n)), `inn` enters. */
export function rollHash(h: number, outF: number, out: number, inn: number): number {
  const g = BYTE_MAP
  return (Math.imul((h - Math.imul(g[out]!, outF)) | 0, ROLL_BASE) + g[inn]!) | 0
}

/**
 * The `bits` (1..32) kept of a raw hash: its top bits, as an unsigned number. Signature version 2
 * kept the top bits of fmix32(h); the sender's search then ran fmix32 on every byte it rolled
 * over, only to test a bitmap. Measured over 20 MiB unrelated targets against 20 MiB seeds (4551
 * blocks, 17-bit bitmap, 23-bit keys), raw top bits vs fmix32 top bits: bitmap passes 3.41% vs
 * 3.41% (random), 3.41 vs 3.43% (code), 3.41 vs 3.42% (log); windows with a seed block's key
 * 548 vs 548, 542 vs 546, 548 vs 538 per million (542 expected of a random key): the top bits
 * alone are as good, since G already spreads every byte over 32 bits.
 */
export function weakKey(h: number, bits: number): number {
  return h >>> (32 - bits)
}

/** Slides the window one byte with outG = outTable(outFactor(n)): one multiply where rollHash
 *  makes two. */
export function rollWith(outG: Int32Array, h: number, out: number, inn: number): number {
  return (Math.imul((h - outG[out]!) | 0, ROLL_BASE) + BYTE_MAP[inn]!) | 0
}

/** G[x] · outF for every byte x: the sender rolls with one multiply per byte instead of two. */
export function outTable(outF: number): Int32Array {
  return BYTE_MAP.map((g) => Math.imul(g, outF))
}

const outTables = new Map<number, Int32Array>()
/** Block sizes whose tables are kept (a session uses a few: its signatures' and rounds'). */
const KEPT_OUT_TABLES = 64

/**
 * outTable(outFactor(n)), made once per block size n and shared (read only): a refinement round
 * makes a matcher per hole, and making the table each time was ~10 µs (30 ms of the sender's CPU
 * for 500 edited text files, by --cpu-prof).
 */
export function outTableFor(n: number): Int32Array {
  let table = outTables.get(n)
  if (table === undefined) {
    if (outTables.size >= KEPT_OUT_TABLES) outTables.clear()
    outTables.set(n, (table = outTable(outFactor(n))))
  }
  return table
}
