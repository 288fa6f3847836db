import { passesThreshold } from './decide.js'
import type { MatchList } from './match-list.js'

/** The similarity of a target to its seed as a match list shows it, by each metric, in [0, 1]. */
export interface MatchedSimilarity {
  readonly jaccard: number
  readonly dice: number
  readonly lcs: number
  /** of the target in the seed: the share of its bytes the matches copy */
  readonly containment: number
}

/**
 * Similarity measured on the bytes, from what matching found: the target bytes the matches
 * cover (M) and the seed bytes they copy (C, each byte once), over both sizes (T, S). dice =
 * (M + C) / (T + S), the sketches' estimate (estimateSimilarity) with exact coverages; jaccard =
 * dice / (2 − dice), as there; containment = M / T; lcs = 2·L / (T + S) with L the heaviest
 * chain of matches in order in both files. After refinement rounds a match list misses only
 * edits and what lies within a few bytes of them: a lower bound on the truth by about the
 * edits' size, where chunk lists see nothing of a chunk an edit touched (DESIGN.md "Estimating").
 */
export function matchedSimilarity(list: MatchList): MatchedSimilarity {
  const { targetSize: t, seedSize: s, matches } = list
  if (t + s === 0) return { jaccard: 1, dice: 1, lcs: 1, containment: 1 }
  let covered = 0
  for (const m of matches) covered += m.length
  const dice = Math.min(1, (covered + seedCovered(list)) / (t + s))
  return {
    jaccard: dice / (2 - dice),
    dice,
    // Computed when read: each refined exchange's end asks one metric (matchesPass).
    get lcs() {
      return Math.min(dice, (2 * heaviestChain(list)) / (t + s))
    },
    containment: t === 0 ? 1 : covered / t,
  }
}

/**
 * Whether the matches of `list` put the file at or above `threshold` by `metric` (a name not
 * known: 0). What ends a refined exchange that measures its file: the receiver's verdict, which
 * a sender of version 9 reaches alone on the list it sent (PROTOCOL.md §4.1).
 */
export function matchesPass(list: MatchList, metric: string, threshold: number): { similarity: number; passes: boolean } {
  const similarity = (matchedSimilarity(list) as unknown as Record<string, number>)[metric] ?? 0
  return { similarity, passes: passesThreshold(similarity, threshold) }
}

/** Seed bytes some match copies, each counted once. */
function seedCovered(list: MatchList): number {
  const ranges = list.matches.map((m) => [m.seed, m.seed + m.length] as const).sort((a, b) => a[0] - b[0])
  let total = 0
  let end = 0
  for (const [from, to] of ranges) {
    if (to <= end) continue
    total += to - Math.max(from, end)
    end = to
  }
  return total
}

/**
 * The largest total length of matches that are in order in both files (target order is the
 * list's; each next one starts in the seed where the one before ended or later): a weighted
 * longest increasing subsequence, O(n log n) with a Fenwick tree of best chains by seed end.
 */
function heaviestChain(list: MatchList): number {
  const ms = list.matches
  if (ms.length === 0) return 0
  const ends = [...new Set(ms.map((m) => m.seed + m.length))].sort((a, b) => a - b)
  const best = new Float64Array(ends.length + 1) // Fenwick tree of max, 1-based, by seed end
  /** rank of the last end ≤ x (0 when none) */
  const rankAtMost = (x: number): number => {
    let lo = 0
    let hi = ends.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (ends[mid]! <= x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  let top = 0
  for (const m of ms) {
    let prior = 0
    for (let i = rankAtMost(m.seed); i > 0; i -= i & -i) prior = Math.max(prior, best[i]!)
    const chain = prior + m.length
    top = Math.max(top, chain)
    for (let i = rankAtMost(m.seed + m.length); i <= ends.length; i += i & -i) best[i] = Math.max(best[i]!, chain)
  }
  return top
}
