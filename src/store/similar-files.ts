import { MAX_QUERY_TOP } from '../choices.js'
import { estimateSimilarity, type MetricName, type Sketch, type SketchEstimate } from '../similarity/index.js'
import type { SimilarFile } from '../types.js'
import type { SketchIndex } from './sketch-index.js'

export type { SimilarFile }

/** Candidates estimated in full per query, most shared keys first: bounds a query's cost. */
const MAX_ESTIMATED = MAX_QUERY_TOP

/** The named metric of an estimate of (seed, target): containment is of the target in the seed. */
export function metricOf(e: SketchEstimate, m: MetricName): number {
  return m === 'containment' ? e.containmentBinA : e[m]
}

function toSimilar(path: string, size: number, e: SketchEstimate): SimilarFile {
  return {
    path,
    size,
    jaccard: e.jaccard,
    dice: e.dice,
    lcs: e.lcs,
    containment: e.containmentBinA,
    containedIn: e.containmentAinB,
    errorBound: e.errorBound,
  }
}

/**
 * sif's one-against-all: the indexed files most similar to `query` by `metric`, best first, at or
 * above `threshold`, at most `top`. Candidates come from the postings (one lookup per anchor);
 * each is then estimated from its sketch. `include` filters paths (a subtree, not the query itself).
 */
export function findSimilar(
  index: SketchIndex,
  query: Sketch,
  opts: { metric: MetricName; threshold: number; top: number; include?: (path: string) => boolean },
): SimilarFile[] {
  const ranked = [...index.candidates(query)].sort((x, y) => y[1] - x[1] || x[0] - y[0])
  const out: SimilarFile[] = []
  let estimated = 0
  for (const [id] of ranked) {
    // Counted as examined, not as kept: a threshold no candidate reaches must not make a query
    // estimate every file that shares a key.
    if (estimated++ >= MAX_ESTIMATED) break
    const path = index.pathOf(id)
    if (path === undefined || (opts.include !== undefined && !opts.include(path))) continue
    const s = index.sketchOf(id)
    if (s === undefined) continue
    const e = estimateSimilarity(s, query)
    if (metricOf(e, opts.metric) >= opts.threshold) out.push(toSimilar(path, s.size, e))
  }
  const key = (f: SimilarFile): number => (opts.metric === 'containment' ? f.containment : f[opts.metric])
  return out.sort((x, y) => key(y) - key(x) || (x.path < y.path ? -1 : 1)).slice(0, opts.top)
}
