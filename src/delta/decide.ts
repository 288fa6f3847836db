import { containment, type Metric, type Profile } from '../similarity/index.js'

/** How one file reaches the receiver. */
export type Method = 'delta' | 'whole'

/** A candidate seed and what the receiver knows of it: its chunk profile. */
export interface SeedCandidate {
  readonly path: string
  readonly profile: Profile
}

/** The receiver's choice for one file: the seed (if any), its similarity, and the method. */
export interface Decision {
  readonly method: Method
  readonly seed: string | null
  /** similarity of the target to the seed by the chosen metric, in [0, 1]; 0 without a seed */
  readonly similarity: number
}

/**
 * Picks the seed and the method (DESIGN.md "Decision"). Candidates are ranked by containment —
 * how many of the target's bytes each can supply, which is what a delta can save — ties going to
 * the earlier candidate (the caller lists the same path first). The rule is then applied to the
 * chosen seed alone: delta when `metric(target, seed) ≥ threshold`, else the whole file.
 */
export function decide(target: Profile, candidates: readonly SeedCandidate[], metric: Metric, threshold: number): Decision {
  let best: SeedCandidate | undefined
  let bestScore = 0
  for (const c of candidates) {
    const score = containment(target.multiset, c.profile.multiset)
    if (score > bestScore) {
      best = c
      bestScore = score
    }
  }
  if (best === undefined) return { method: 'whole', seed: null, similarity: 0 }
  const similarity = metric(target, best.profile)
  return similarity >= threshold && similarity > 0
    ? { method: 'delta', seed: best.path, similarity }
    : { method: 'whole', seed: best.path, similarity }
}

/**
 * How many separate regions of the target the seed cannot supply: maximal runs of target
 * chunks whose fingerprint the seed lacks. An edit inside a chunk is one region; appended or
 * inserted data is one region however long. Sizes the delta's blocks (blockSizeForChange).
 */
export function changedRegions(target: Profile, seed: Profile): number {
  let regions = 0
  let inRun = false
  for (const c of target.chunks) {
    const missing = !seed.multiset.counts.has(c.fp)
    if (missing && !inRun) regions++
    inRun = missing
  }
  return regions
}
