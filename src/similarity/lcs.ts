import type { WeightedChunk } from './multiset.js'

/** What the LCS needs of an item: a key compared for equality (a fingerprint, or a sketch
 *  anchor's identity as hex), and a weight. */
export interface KeyedWeight {
  readonly length: number
  readonly fp: string
}

/**
 * When one fingerprint occurs more than this many times in A (long runs of identical chunks,
 * e.g. zero-filled regions), each of its occurrences in B is matched only against occurrences
 * in A of nearby rank (a diagonal band), which keeps the match count O(n·BAND) instead of
 * O(n·m). The result is then a lower bound of the weighted LCS (still ≤ dice); exact otherwise.
 */
const BAND = 32

/** Per process, unknown to a peer: which keys share a slot cannot be chosen from outside. */
const KEY_MULTIPLIER = (Math.floor(Math.random() * 2 ** 31) * 2 + 1) | 0
const KEY_SEED = Math.floor(Math.random() * 2 ** 32) | 0

/** Fingerprint → dense slot number (0, 1, 2, … in order of first sight). */
class FingerprintIndex {
  private readonly table: Int32Array
  private readonly mask: number
  private readonly shift: number
  private readonly fps: string[] = []

  constructor(expected: number) {
    let bits = 4
    while (1 << bits < 2 * expected) bits++
    this.table = new Int32Array(1 << bits).fill(-1)
    this.mask = (1 << bits) - 1
    this.shift = 32 - bits
  }

  /** The slot of `fp`; when absent, a new slot if `add`, else -1. */
  slot(fp: string, add: boolean): number {
    // The whole key, with a multiplier chosen per process: keys come from the peer (chunk lists,
    // sketches), and a hash of their first 8 characters let a sketch of 80,000 anchors sharing
    // them take 34 s here (linear probing through one cluster); 60,000: 18 s, now 41 ms. The
    // whole 32-character key costs 130k × 130k chunk lists 45 → 65 ms of CPU.
    let h = KEY_SEED
    for (let i = 0; i < fp.length; i++) h = Math.imul(h ^ fp.charCodeAt(i), KEY_MULTIPLIER)
    for (let i = Math.imul(h ^ (h >>> 15), 0x9e3779b1) >>> this.shift; ; i = (i + 1) & this.mask) {
      const s = this.table[i]!
      if (s < 0) {
        if (!add) return -1
        this.table[i] = this.fps.length
        this.fps.push(fp)
        return this.fps.length - 1
      }
      if (this.fps[s] === fp) return s
    }
  }
}

/**
 * Weight (bytes) of the heaviest common subsequence of two chunk sequences, where a matched
 * pair weighs its chunk length.
 *
 * Hunt–Szymanski: fingerprints are nearly unique, so list, for each chunk of B in order, the
 * positions in A with the same fingerprint; an LCS is then a chain of matches increasing in both
 * indices. Visiting each B position's matches in decreasing A order makes it a heaviest
 * increasing subsequence over A positions, solved with a Fenwick tree of prefix maxima:
 * O((n + r) log n) for r matches. 130k × 130k chunks at 95% overlap: see README "Benchmarks"
 * (bench/similarity.ts).
 */
export function lcsWeight(a: readonly KeyedWeight[], b: readonly KeyedWeight[]): number {
  const n = a.length
  // Positions of each fingerprint in A, as chains through `prev` (newest first), found through
  // an open-addressing table keyed by a hash of the fingerprint: a Map of
  // 130k string keys and an array per fingerprint cost more than the LCS itself.
  const index = new FingerprintIndex(n)
  const lastAt: number[] = [] // slot → last position in A
  const count: number[] = [] // slot → occurrences in A
  const prev = new Int32Array(n) // position → previous position with the same fingerprint, or -1
  for (let i = 0; i < n; i++) {
    const s = index.slot(a[i]!.fp, true)
    if (s === lastAt.length) {
      lastAt.push(i)
      count.push(1)
      prev[i] = -1
    } else {
      prev[i] = lastAt[s]!
      lastAt[s] = i
      count[s]!++
    }
  }
  const tree = new Float64Array(n + 1) // Fenwick tree over A positions 1..n, prefix max
  let best = 0
  // Match B's chunk of weight w at A position `pos` (0-based): extend the best chain before it.
  const match = (pos: number, w: number): void => {
    let m = 0
    for (let i = pos; i > 0; i -= i & -i) if (tree[i]! > m) m = tree[i]!
    const v = m + w
    for (let i = pos + 1; i <= n; i += i & -i) if (tree[i]! < v) tree[i] = v
    if (v > best) best = v
  }
  const heavy = new Map<number, { readonly positions: Int32Array; rank: number }>() // banded slots
  for (const c of b) {
    const s = index.slot(c.fp, false)
    if (s < 0) continue
    if (count[s]! <= BAND + 1) {
      // Decreasing A order: a B chunk must not be matched twice in one chain.
      for (let p = lastAt[s]!; p >= 0; p = prev[p]!) match(p, c.length)
      continue
    }
    let h = heavy.get(s)
    if (h === undefined) {
      const positions = new Int32Array(count[s]!)
      for (let p = lastAt[s]!, k = positions.length - 1; p >= 0; p = prev[p]!, k--) positions[k] = p
      h = { positions, rank: 0 }
      heavy.set(s, h)
    }
    const center = Math.min(h.rank++, h.positions.length - 1)
    const lo = Math.max(0, center - BAND)
    for (let k = Math.min(h.positions.length, center + BAND + 1) - 1; k >= lo; k--) match(h.positions[k]!, c.length)
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
