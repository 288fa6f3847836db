import { METRIC_NAMES, type MetricName } from '../choices.js'
import { DsyncError } from '../errors.js'
import { lcsSimilarity } from './lcs.js'
import { toMultiset, sharedWeight, type Multiset, type WeightedChunk } from './multiset.js'
import { containment, dice, jaccard } from './overlap.js'

/** A file's chunks, with the multiset view computed once and shared by every metric. */
export interface Profile {
  readonly chunks: readonly WeightedChunk[]
  readonly multiset: Multiset
}

export function profile(chunks: readonly WeightedChunk[]): Profile {
  return { chunks, multiset: toMultiset(chunks) }
}

// The metric names and the rule's defaults live in the leaf ../choices.ts (the CLI's options
// read them without loading this layer).
export { type MetricName, METRIC_NAMES, DEFAULT_METRIC, DEFAULT_THRESHOLD } from '../choices.js'

/** A metric: similarity of a target to a seed, in [0, 1]. */
export type Metric = (target: Profile, seed: Profile) => number

const METRICS: Readonly<Record<MetricName, Metric>> = Object.freeze({
  jaccard: (t, s) => jaccard(t.multiset, s.multiset),
  dice: (t, s) => dice(t.multiset, s.multiset),
  lcs: (t, s) => lcsSimilarity(t.chunks, s.chunks),
  containment: (t, s) => containment(t.multiset, s.multiset),
})

/** The metric of that name; USAGE error naming the choices otherwise. */
export function metricByName(name: string): Metric {
  if (!(METRIC_NAMES as readonly string[]).includes(name)) {
    throw new DsyncError('USAGE', `unknown metric "${name}": choose one of ${METRIC_NAMES.join(', ')}`)
  }
  return METRICS[name as MetricName]
}

/** Every metric of A against B at once, and the bytes they share. */
export interface SimilarityReport {
  readonly jaccard: number
  readonly dice: number
  readonly lcs: number
  /** share of A's bytes found in B */
  readonly containmentAinB: number
  /** share of B's bytes found in A */
  readonly containmentBinA: number
  /** Σ len·min(n1, n2) */
  readonly sharedBytes: number
}

export function compare(a: Profile, b: Profile): SimilarityReport {
  return {
    jaccard: jaccard(a.multiset, b.multiset),
    dice: dice(a.multiset, b.multiset),
    lcs: lcsSimilarity(a.chunks, b.chunks),
    containmentAinB: containment(a.multiset, b.multiset),
    containmentBinA: containment(b.multiset, a.multiset),
    sharedBytes: sharedWeight(a.multiset, b.multiset),
  }
}
