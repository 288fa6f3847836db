import type { Fingerprint } from '../types.js'
import type { WeightedChunk } from './multiset.js'

/**
 * When one fingerprint occurs more than this many times in A (long runs of identical chunks,
 * e.g. zero-filled regions), each of its occurrences in B is matched only against occurrences
 * in A of nearby rank (a diagonal band), which keeps the match count O(n·BAND) instead of
 * O(n·m). The result is then a lower bound of the weighted LCS (still ≤ dice); exact otherwise.
 */
const BAND = 32

/**
 * Weight (bytes) of the heaviest common subsequence of two chunk sequences, where a matched
 * pair weighs its chunk length.
 *
 * Hunt–Szymanski: fingerprints are nearly unique, so list, for each chunk of B in order, the
 * positions in A with the same fingerprint; an LCS is then a chain of matches increasing in both
 * indices. Visiting each B position's matches in decreasing A order makes it a heaviest
 * increasing subsequence over A positions, solved with a Fenwick tree of prefix maxima:
 * O((n + r) log n) for r matches. 130k × 130k chunks: ~20 ms (bench/similarity.ts).
 */
export function lcsWeight(a: readonly WeightedChunk[], b: readonly WeightedChunk[]): number {
  const positions = new Map<Fingerprint, number[]>()
  for (let i = 0; i < a.length; i++) {
    const fp = a[i]!.fp
    const list = positions.get(fp)
    if (list === undefined) positions.set(fp, [i])
    else list.push(i)
  }
  const n = a.length
  const tree = new Float64Array(n + 1) // Fenwick tree over A positions 1..n, prefix max
  const prefixMax = (i: number): number => {
    let m = 0
    for (; i > 0; i -= i & -i) if (tree[i]! > m) m = tree[i]!
    return m
  }
  const raise = (i: number, v: number): void => {
    for (; i <= n; i += i & -i) if (tree[i]! < v) tree[i] = v
  }
  const seen = new Map<Fingerprint, number>() // occurrences of each fp in B so far (its rank)
  let best = 0
  for (const c of b) {
    const list = positions.get(c.fp)
    if (list === undefined) continue
    let lo = 0
    let hi = list.length
    if (list.length > BAND + 1) {
      const rank = seen.get(c.fp) ?? 0
      seen.set(c.fp, rank + 1)
      const center = Math.min(rank, list.length - 1)
      lo = Math.max(0, center - BAND)
      hi = Math.min(list.length, center + BAND + 1)
    }
    // Decreasing A order: a B chunk must not be matched twice in one chain.
    for (let k = hi - 1; k >= lo; k--) {
      const pos = list[k]! + 1
      const v = prefixMax(pos - 1) + c.length
      raise(pos, v)
      if (v > best) best = v
    }
  }
  return best
}

/** The seed's formula 2: 2 · weighted LCS / (total weight of A + total weight of B). */
export function lcsSimilarity(a: readonly WeightedChunk[], b: readonly WeightedChunk[]): number {
  let total = 0
  for (const c of a) total += c.length
  for (const c of b) total += c.length
  return total === 0 ? 1 : (2 * lcsWeight(a, b)) / total
}
