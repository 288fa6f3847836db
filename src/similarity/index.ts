/** Similarity of chunk lists: weighted multisets (formula 1: jaccard, dice, containment) and
 *  weighted LCS (formula 2). Pure. */
export { type WeightedChunk, type Multiset, toMultiset, sharedWeight } from './multiset.js'
export { jaccard, dice, containment } from './overlap.js'
export { lcsWeight, lcsSimilarity } from './lcs.js'
export {
  type Profile,
  profile,
  type MetricName,
  METRIC_NAMES,
  DEFAULT_METRIC,
  DEFAULT_THRESHOLD,
  type Metric,
  metricByName,
  type SimilarityReport,
  compare,
} from './metrics.js'
