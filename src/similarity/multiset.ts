import type { Chunk, Fingerprint } from '../types.js'

/** The chunk facts similarity needs: a fingerprint and its weight (the chunk's length). */
export type WeightedChunk = Pick<Chunk, 'length' | 'fp'>

/** A file as a multiset of fingerprints, each weighted by its chunk length (formula 1's view). */
export interface Multiset {
  /** fingerprint → [chunk length in bytes, multiplicity] */
  readonly counts: ReadonlyMap<Fingerprint, { readonly length: number; readonly n: number }>
  /** Σ length · n: the file's size when the chunks cover it. */
  readonly total: number
}

/** Builds the weighted multiset of a chunk list. */
export function toMultiset(chunks: readonly WeightedChunk[]): Multiset {
  const counts = new Map<Fingerprint, { length: number; n: number }>()
  let total = 0
  for (const c of chunks) {
    const e = counts.get(c.fp)
    if (e === undefined) counts.set(c.fp, { length: c.length, n: 1 })
    else e.n++
    total += c.length
  }
  return { counts, total }
}

/** Σ len · min(n1, n2): the bytes the two multisets share. */
export function sharedWeight(a: Multiset, b: Multiset): number {
  const [small, large] = a.counts.size <= b.counts.size ? [a, b] : [b, a]
  let shared = 0
  for (const [fp, e] of small.counts) {
    const o = large.counts.get(fp)
    if (o !== undefined) shared += e.length * Math.min(e.n, o.n)
  }
  return shared
}
