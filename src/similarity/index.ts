/** Similarity: of chunk lists (weighted multisets, formula 1: jaccard, dice, containment; and
 *  weighted LCS, formula 2), and estimated from sketches of short content-chosen windows. Pure. */
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
export { type KeyedWeight } from './lcs.js'
export { TopAnchors } from './top-anchors.js'
export {
  type Sketch,
  SketchBuilder,
  type SketchOptions,
  sketchBytes,
  sketchStream,
  atLevel,
  SHORT_WINDOW,
  LONG_WINDOW,
  MIN_ANCHORS,
  DENSE_LEVEL,
  MAX_ANCHORS,
  NO_AHEAD,
  windowIdentity,
  type AnchorWindows,
} from './sketch.js'
export { type SketchEstimate, estimateSimilarity } from './sketch-estimate.js'
export { encodeSketch, encodeSketchWithin, decodeSketch, type SketchFormat } from './sketch-codec.js'
