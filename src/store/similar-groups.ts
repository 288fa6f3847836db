import { DsyncError } from '../errors.js'
import { estimateSimilarity, type MetricName, type Sketch, type SketchEstimate } from '../similarity/index.js'
import type { SimilarGroup, SimilarPair } from '../types.js'
import type { SketchIndex } from './sketch-index.js'

export type { SimilarGroup, SimilarPair }

/** Pair keys pack two ids in one exact number: lo · 2^26 + hi. */
const ID_LIMIT = 2 ** 26

/** Groups are symmetric: containment counts either way (one file inside the other). */
function pairMetric(e: SketchEstimate, m: MetricName): number {
  return m === 'containment' ? Math.max(e.containmentAinB, e.containmentBinA) : e[m]
}

class UnionFind {
  readonly #parent = new Map<number, number>()
  find(x: number): number {
    let r = x
    while (this.#parent.has(r) && this.#parent.get(r) !== r) r = this.#parent.get(r)!
    this.#parent.set(x, r)
    return r
  }
  union(a: number, b: number): void {
    const [ra, rb] = [this.find(a), this.find(b)]
    if (ra !== rb) this.#parent.set(Math.max(ra, rb), Math.min(ra, rb))
  }
}

/**
 * sif's all-against-all from the inverted index, never comparing all pairs: pairs of files come
 * only from shared posting lists (Figure 1), counted (Figure 2); a pair sharing at least
 * `minShared` keys is estimated from the two sketches and kept at or above `threshold`; groups
 * are the connected files.
 */
export function groupSimilar(index: SketchIndex, opts: { metric: MetricName; threshold: number; minShared?: number }): SimilarGroup[] {
  const minShared = opts.minShared ?? 2
  const shared = new Map<number, number>()
  for (const list of index.sharedLists()) {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const [lo, hi] = list[i]! < list[j]! ? [list[i]!, list[j]!] : [list[j]!, list[i]!]
        if (hi >= ID_LIMIT) throw new DsyncError('INTERNAL', 'similarity index ids over 2^26: delete the .dsync folder to rebuild it')
        const key = lo * ID_LIMIT + hi
        shared.set(key, (shared.get(key) ?? 0) + 1)
      }
    }
  }
  const sketches = new Map<number, Sketch | undefined>()
  const sketch = (id: number): Sketch | undefined => {
    if (!sketches.has(id)) sketches.set(id, index.sketchOf(id))
    return sketches.get(id)
  }
  const uf = new UnionFind()
  const edges: [number, number, number][] = []
  for (const [key, n] of shared) {
    if (n < minShared) continue
    const [lo, hi] = [Math.floor(key / ID_LIMIT), key % ID_LIMIT]
    const [sa, sb] = [sketch(lo), sketch(hi)]
    if (sa === undefined || sb === undefined) continue
    const sim = pairMetric(estimateSimilarity(sa, sb), opts.metric)
    if (sim < opts.threshold) continue
    edges.push([lo, hi, sim])
    uf.union(lo, hi)
  }
  const byRoot = new Map<number, { ids: Set<number>; edges: [number, number, number][] }>()
  for (const e of edges) {
    const r = uf.find(e[0])
    const g = byRoot.get(r) ?? { ids: new Set(), edges: [] }
    g.ids.add(e[0]).add(e[1])
    g.edges.push(e)
    byRoot.set(r, g)
  }
  const groups: SimilarGroup[] = []
  for (const g of byRoot.values()) {
    const degree = new Map<number, number>()
    for (const [a, b] of g.edges) for (const x of [a, b]) degree.set(x, (degree.get(x) ?? 0) + 1)
    const ids = [...g.ids].sort((x, y) => degree.get(y)! - degree.get(x)! || sketch(y)!.size - sketch(x)!.size || x - y)
    const ref = ids[0]!
    const files = ids.map((id) => ({
      path: index.pathOf(id)!,
      size: sketch(id)!.size,
      similarity: id === ref ? 1 : pairMetric(estimateSimilarity(sketch(ref)!, sketch(id)!), opts.metric),
    }))
    const pairs = g.edges.map(([a, b, s]) => ({ a: index.pathOf(a)!, b: index.pathOf(b)!, similarity: s }))
    groups.push({ reference: files[0]!.path, files: [files[0]!, ...files.slice(1).sort((x, y) => y.similarity - x.similarity)], pairs })
  }
  return groups.sort((x, y) => y.files.length - x.files.length || (x.reference < y.reference ? -1 : 1))
}
