import { sharedWeight, type Multiset } from './multiset.js'

/** Weighted multiset Jaccard (the seed's formula 1): Σ len·min / Σ len·max. In [0, 1]. */
export function jaccard(a: Multiset, b: Multiset): number {
  const shared = sharedWeight(a, b)
  const union = a.total + b.total - shared // Σ max = Σ n1 + Σ n2 − Σ min
  return union === 0 ? 1 : shared / union
}

/** Dice (what the seed's code computes): 2·Σ len·min / Σ len·(n1 + n2). In [0, 1]. */
export function dice(a: Multiset, b: Multiset): number {
  const sum = a.total + b.total
  return sum === 0 ? 1 : (2 * sharedWeight(a, b)) / sum
}

/** Containment of A in B: Σ len·min / Σ len·n1, the share of A's bytes that B can supply. */
export function containment(a: Multiset, b: Multiset): number {
  return a.total === 0 ? 1 : sharedWeight(a, b) / a.total
}
