import { containment, profile, type Metric, type Profile } from '../similarity/index.js'

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
  /** set when the rule was not the threshold: why */
  readonly note?: string
}

/**
 * Below this many target chunks the similarity cannot see what a delta would save: three
 * 40-byte edits in a 20 KiB file change most of its two or three 8 KiB chunks, so dice reads
 * ~0.3 while 99% of the bytes are unchanged (bench/sync.ts "text edits": 42 of 50 such files
 * went whole, 5.9× rsync -az's bytes). For so small a file the delta's only cost is the
 * seed's signature, ~4.5 bytes per 256-byte block, so against the same path it is sent anyway.
 */
export const MIN_MEASURABLE_CHUNKS = 8

/** The rule (DESIGN.md "Decision"): a delta when the similarity reaches the threshold, and
 *  never from a seed sharing nothing (threshold 0). */
export function passesThreshold(similarity: number, threshold: number): boolean {
  return similarity >= threshold && similarity > 0
}

/**
 * Picks the seed and the method (DESIGN.md "Decision"). Candidates are ranked by containment —
 * how many of the target's bytes each can supply, which is what a delta can save — ties going to
 * the earlier candidate (the caller lists the same path first). The rule is then applied to the
 * chosen seed alone: delta when `metric(target, seed) ≥ threshold`, else the whole file. A
 * target too small to measure is a delta from `samePath` below the threshold too; the note says
 * what that file is (`samePathIs`: its earlier version unless told, as a guess by name tells).
 */
export function decide(
  target: Profile,
  candidates: readonly SeedCandidate[],
  metric: Metric,
  threshold: number,
  opts: { samePath?: string; samePathIs?: string } = {},
): Decision {
  let best: SeedCandidate | undefined
  let bestScore = 0
  for (const c of candidates) {
    const score = containment(target.multiset, c.profile.multiset)
    if (score > bestScore) {
      best = c
      bestScore = score
    }
  }
  const same = candidates.find((c) => c.path === opts.samePath)
  if (same !== undefined && target.chunks.length < MIN_MEASURABLE_CHUNKS) {
    const similarity = metric(target, same.profile)
    if (similarity < threshold) {
      return { method: 'delta', seed: same.path, similarity, note: `fewer than ${MIN_MEASURABLE_CHUNKS} chunks: too small to measure, delta from ${opts.samePathIs ?? 'its earlier version'}` }
    }
  }
  if (best === undefined) return { method: 'whole', seed: null, similarity: 0 }
  const similarity = metric(target, best.profile)
  return passesThreshold(similarity, threshold)
    ? { method: 'delta', seed: best.path, similarity }
    : { method: 'whole', seed: best.path, similarity }
}

/**
 * The size below which a file cannot be a seed of a target of `targetBytes`, alone or as one of
 * two (secondSeed), at `threshold`. A seed of s bytes scores at most 2·s / (s + T) against a
 * target of T by any metric here (dice's bound, the loosest: jaccard's and containment's are
 * s / T), and two seeds at most as one of 2·s bytes; the similarities count chunks, not bytes,
 * so the bound is halved once more. The receiver completes its content index from this size up
 * only: a new 1 MiB file on a receiver of 100,000 files of 100 B–8 KiB read and chunked all of
 * them (6 s) for seeds that could not have passed.
 */
export function smallestSeedBytes(targetBytes: number, threshold: number): number {
  if (!(threshold > 0)) return 0
  return Math.floor((threshold * targetBytes) / (4 * (2 - Math.min(threshold, 1))))
}

/**
 * A second seed supplies at least this share of the target's bytes that the first does not, or
 * none is used: it costs its signature (and a read of it on the receiver) for what it saves.
 */
export const MIN_SECOND_SEED_SHARE = 0.1

/** What a second seed brings (secondSeed). */
export interface SecondSeed {
  readonly path: string
  /** share of the target's bytes it supplies that the first does not */
  readonly adds: number
  /** the metric of the target against both seeds, their chunks as one seed */
  readonly similarity: number
}

/**
 * A second seed for a file made of pieces of several (DESIGN.md "Decision"; issue 10): of the
 * candidates other than `first`, the one that supplies the most of the target's bytes that
 * `first` does not, when that is at least MIN_SECOND_SEED_SHARE. The two then act as one seed,
 * their bytes one after the other, and the rule applies to the pair: `similarity` is the metric
 * of the target against both chunk lists together. A file with 160 KiB of one file and 64 KiB
 * of another copies both pieces instead of sending the second as literals.
 */
export function secondSeed(target: Profile, candidates: readonly SeedCandidate[], first: string, metric: Metric): SecondSeed | undefined {
  const one = candidates.find((c) => c.path === first)
  if (one === undefined) return undefined
  const alone = containment(target.multiset, one.profile.multiset)
  let best: { c: SeedCandidate; pair: Profile; adds: number } | undefined
  for (const c of candidates) {
    if (c.path === first) continue
    const pair = profile([...one.profile.chunks, ...c.profile.chunks])
    const adds = containment(target.multiset, pair.multiset) - alone
    // (The small slack: 0.6 − 0.5 is 0.0999… in floating point.)
    if (adds >= MIN_SECOND_SEED_SHARE - 1e-9 && adds > (best?.adds ?? 0)) best = { c, pair, adds }
  }
  if (best === undefined) return undefined
  return { path: best.c.path, adds: best.adds, similarity: metric(target, best.pair) }
}

/**
 * The candidates as decide weighs them: best first by containment (what each can supply of the
 * target), ties to the earlier; each with its similarity by `metric`. What `-vv` shows.
 */
export function rankSeeds(target: Profile, candidates: readonly SeedCandidate[], metric: Metric, n: number): { path: string; similarity: number }[] {
  return candidates
    .map((c, i) => ({ c, i, score: containment(target.multiset, c.profile.multiset) }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, n)
    .map(({ c }) => ({ path: c.path, similarity: metric(target, c.profile) }))
}

/** Edits guessed per chunk of a target that shares no chunk with its seed (changedRegions):
 *  4 per 8 KiB sizes a 300 KiB seed's round-1 blocks at ~256 bytes; with one region's blocks a
 *  file edited every 2 KB matched nothing and went whole. */
export const EDITS_PER_UNSHARED_CHUNK = 4

/**
 * How many separate regions of the target the seed cannot supply: maximal runs of target
 * chunks whose fingerprint the seed lacks. An edit inside a chunk is one region; appended or
 * inserted data is one region however long. Sizes the delta's blocks (blockSizeForChange).
 *
 * `scale` > 1 when the target list is a sample holding 1/scale of the file's bytes: an edit
 * that touched one chunk is then seen only when that chunk was sampled, so each run of one
 * missing chunk stands for `scale` regions (most of its kind went unseen), while a longer run
 * is one large region seen several times. (bench/sync.ts, 50 MiB with 100 scattered
 * overwrites: counting sampled runs as they are gave 12 regions and 645 KB on the wire; scaled,
 * the estimate is near 100 again.) A target that shares no chunk at all has
 * EDITS_PER_UNSHARED_CHUNK regions per chunk.
 */
export function changedRegions(target: Profile, seed: Profile, scale = 1): number {
  let regions = 0
  let run = 0
  let shared = false
  const endRun = (): void => {
    if (run === 1) regions += scale
    else if (run > 1) regions += 1
    run = 0
  }
  for (const c of target.chunks) {
    if (seed.multiset.counts.has(c.fp)) {
      shared = true
      endRun()
    } else {
      run++
    }
  }
  endRun()
  // No chunk shared (a seed found by the bytes: its sketch, or the file's own path): the edits
  // may be in every chunk, and blocks sized for one region would match nothing.
  if (!shared && target.chunks.length > 0) return Math.round(EDITS_PER_UNSHARED_CHUNK * target.chunks.length * scale)
  return Math.round(regions)
}
