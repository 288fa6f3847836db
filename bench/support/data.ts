import { randomBytes } from '../../test/support/random.js'

/** Seeded pseudo-random bytes: the same on every run and machine (test/support/random.ts). */
export const seededBytes: (seed: number, n: number) => Uint8Array = randomBytes

/** A seeded xorshift32 stream of uint32s: the benches' one source of chosen-at-random numbers. */
export function xorshift32(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>>= 0)
  }
}

export const KiB = 1024
export const MiB = 1024 * KiB
export const GiB = 1024 * MiB

/**
 * A seeded edited copy of `base`: `edits` edits at seeded positions, each replacing, inserting
 * or deleting up to `maxLen` bytes (a mix like real edits of a document or binary).
 */
export function editedCopy(base: Uint8Array, seed: number, edits: number, maxLen: number): Uint8Array {
  const rnd = seededBytes(seed, edits * 12)
  const word = (i: number): number => (rnd[i]! | (rnd[i + 1]! << 8) | (rnd[i + 2]! << 16) | (rnd[i + 3]! << 24)) >>> 0
  const at = Array.from({ length: edits }, (_, k) => word(k * 12) % base.length).sort((a, b) => a - b)
  const parts: Uint8Array[] = []
  let pos = 0
  at.forEach((p, k) => {
    if (p < pos) return
    const len = 1 + (word(k * 12 + 4) % maxLen)
    const kind = word(k * 12 + 8) % 3
    parts.push(base.subarray(pos, p))
    if (kind !== 2) parts.push(seededBytes(seed * 7919 + k, len)) // replace or insert
    pos = kind === 1 ? p : Math.min(base.length, p + len) // insert keeps, replace/delete skip
  })
  parts.push(base.subarray(pos))
  return Buffer.concat(parts)
}

/** One async stream of `data` in pieces of `size` bytes (as a file source would yield). */
export async function* inPieces(data: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let p = 0; p < data.length; p += size) yield data.subarray(p, Math.min(data.length, p + size))
}
