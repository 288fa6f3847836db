import { lcsWeight, type KeyedWeight } from './lcs.js'
import { atLevel, LONG_WINDOW, NO_AHEAD, SHORT_WINDOW, type Sketch } from './sketch.js'

/**
 * Every metric of two files, estimated from their sketches alone (no file bytes): what the
 * index ranks with and what can travel on the wire. The formulas are DESIGN.md's, with a
 * file's shared bytes taken as the bytes that lie in substrings of ≥ LONG_WINDOW bytes
 * found in the other file (issue 10's truth):
 *   containment(A in B) = covA;  dice = (covA·|A| + covB·|B|) / (|A| + |B|);
 *   jaccard = dice / (2 − dice) (Σ min / Σ max when the shared bytes are the same on both sides);
 *   lcs = the same as dice over the shared bytes that keep their order in both files.
 */
export interface SketchEstimate {
  readonly jaccard: number
  readonly dice: number
  readonly lcs: number
  /** share of A's bytes found in B */
  readonly containmentAinB: number
  /** share of B's bytes found in A */
  readonly containmentBinA: number
  /** ± this much (0..1) covers each estimate with ~95% probability (sampling error, 2 sigma) */
  readonly errorBound: number
  /** the sampling level compared at (one position in 2^level) and the anchors used per file */
  readonly level: number
  readonly anchorsA: number
  readonly anchorsB: number
}

/** How far the covered bytes reach past the sampled windows: the edge correction's slope. */
const EDGE_SLOPE = (LONG_WINDOW - 1) / (LONG_WINDOW - SHORT_WINDOW)

/**
 * The weight of an anchor whose 32-byte window the other file holds but neither 64-byte window
 * (ending at it, centred on it): it lies in a shared piece of 32–63 bytes (weight 0 by the
 * truth's rule) or within 31 bytes of the end of a piece of 64–94 (weight EDGE_SLOPE), and one
 * anchor cannot tell which. A piece of L in 32–63 has L − 31 such positions, one of 64–94 has
 * 95 − L: for piece lengths spread evenly about 64, half the slope leaves no bias.
 * bench/accuracy.ts (280 pairs, format 1 and 2 from the same pairs), scattered MAE jaccard /
 * dice / lcs / containment and the wrong calls of the four rules at 50%:
 *   format 1 (Gear's identities, ~23 and 53 bytes wide)  5.0 / 5.6 / 4.4 / 5.6   5 / 10 / 12 / 18
 *   format 2, this weight 3/4 of the slope               4.4 / 4.8 / 4.6 / 4.6   7 /  9 /  7 / 15
 *   format 2, half the slope                             2.4 / 2.4 / 2.4 / 2.6   7 /  7 /  7 / 15
 * (With Gear's identities, whose windows are narrower than they claim, half the slope read
 * pieces of 50–150 bytes low and cost the containment rule 6.5 MiB: 3/4 was used then.)
 */
const UNSURE_EDGE = EDGE_SLOPE / 2

/**
 * The long identity as one exact JS number: h(p) (32 bits) and 21 bits of h(p − 32), 53 bits.
 * h(p)'s top `level` bits are zero, so at level 9 the key keeps 44 bits of content: two
 * sketches of 20k anchors each collide by chance with probability ~2e-5.
 */
function longKey(short: number, prior: number): number {
  return short * 0x200000 + (prior & 0x1fffff)
}

/** Hex key for the LCS index: the prior half first (its leading characters are well spread). */
function hexKey(short: number, prior: number): string {
  return (prior >>> 0).toString(16).padStart(8, '0') + (short >>> 0).toString(16).padStart(8, '0')
}

/** Two sketches compare by their exact windows only when both have them (format 2). */
function bothExact(x: Sketch, y: Sketch): boolean {
  return x.windows !== undefined && y.windows !== undefined
}

/** The second half of anchor k's long identity (with h(p)): its exact 64 bytes' (format 2), or
 *  Gear's h(p − 32). */
function longPart(s: Sketch, exact: boolean, k: number): number {
  return exact ? s.windows!.w64[k]! : s.prior[k]!
}

interface Coverage {
  /** estimated share of the file's bytes found in the other file, 0..1 */
  readonly cov: number
  /** its standard error */
  readonly se: number
  /** weight of anchors whose long window the other file holds */
  readonly longHits: number
}

/**
 * The share of X's bytes in substrings ≥ 64 bytes that Y holds. S(w), the share of X's
 * positions whose w-byte window Y holds, misses e + w − 1 positions per edit of e bytes:
 * linear in w. Both windows are seen at the same sampled positions, so S(1) = S(64) +
 * 63/32·(S(32) − S(64)) is read off one sample: the bytes themselves, edge bias removed.
 * For 100-byte edits keeping 90%, S(64) alone would read 90 − 6.3 points (163 positions lost
 * per 100 bytes edited); corrected, bench/accuracy.ts reads 92.1–95.8 against 93.1–95.5.
 * Exact for shared pieces ≥ 64 bytes; a piece of 32–63 bytes reads as partly shared.
 */
function coverage(x: Sketch, y: Sketch): Coverage {
  // Both of format 2: the exact windows; else (format 1 on either side) Gear's identities, every
  // short-only hit taken as an edge.
  const exact = bothExact(x, y)
  const ids = (s: Sketch): { short: (k: number) => number; long: (k: number) => number; centred: (k: number) => number | undefined } => {
    const w = s.windows
    const long = (k: number): number => longKey(s.short[k]!, longPart(s, exact, k))
    return exact
      ? {
          short: (k) => longKey(s.short[k]!, w!.w32[k]!),
          long,
          centred: (k) => (w!.centred[k] === NO_AHEAD ? undefined : longKey(s.short[k]!, w!.centred[k]!)),
        }
      : { short: (k) => s.short[k]!, long, centred: () => undefined }
  }
  const [ix, iy] = [ids(x), ids(y)]
  const shorts = new Set<number>()
  const longs = new Set<number>()
  const centreds = new Set<number>()
  for (let k = 0; k < y.short.length; k++) {
    shorts.add(iy.short(k))
    longs.add(iy.long(k))
    const c = iy.centred(k)
    if (c !== undefined) centreds.add(c)
  }
  const shortOnly = (k: number): number => {
    if (!exact) return EDGE_SLOPE
    const c = ix.centred(k)
    return c !== undefined && centreds.has(c) ? EDGE_SLOPE : UNSURE_EDGE
  }
  let total = 0
  let sum = 0
  let longHits = 0
  const values = new Float64Array(x.short.length)
  for (let k = 0; k < x.short.length; k++) {
    const w = x.count[k]!
    const v = longs.has(ix.long(k)) ? 1 : shorts.has(ix.short(k)) ? shortOnly(k) : 0
    if (v === 1) longHits += w
    values[k] = v
    total += w
    sum += w * v
  }
  if (total === 0) return { cov: 0, se: 0, longHits: 0 }
  const mean = sum / total
  let sq = 0
  for (let k = 0; k < values.length; k++) sq += x.count[k]! ** 2 * (values[k]! - mean) ** 2
  return { cov: Math.min(1, Math.max(0, mean)), se: Math.sqrt(sq) / total, longHits }
}

/** Weight of X's long hits that also keep their order in Y (heaviest common subsequence). */
function orderedHits(x: Sketch, y: Sketch): number {
  const exact = bothExact(x, y)
  const items = (s: Sketch): KeyedWeight[] =>
    Array.from(s.short, (short, k) => ({ length: s.count[k]!, fp: hexKey(short, longPart(s, exact, k)) }))
  return lcsWeight(items(y), items(x))
}

function tinyEstimate(a: Sketch, b: Sketch): SketchEstimate {
  const same = a.size === b.size && a.tiny.every((v, i) => v === b.tiny[i])
  const r = same ? 1 : 0
  return { jaccard: r, dice: r, lcs: r, containmentAinB: r, containmentBinA: r, errorBound: 0, level: 0, anchorsA: 0, anchorsB: 0 }
}

/** Estimates every metric of A against B from their sketches. Symmetric up to naming. */
export function estimateSimilarity(sa: Sketch, sb: Sketch): SketchEstimate {
  if (sa.tiny.length > 0 || sb.tiny.length > 0 || sa.size === 0 || sb.size === 0) return tinyEstimate(sa, sb)
  const level = Math.max(sa.level, sb.level)
  const a = atLevel(sa, level)
  const b = atLevel(sb, level)
  const ca = coverage(a, b)
  const cb = coverage(b, a)
  const total = a.size + b.size
  const dice = (ca.cov * a.size + cb.cov * b.size) / total
  const diceSe = (ca.se * a.size + cb.se * b.size) / total
  let lcs = 0
  if (ca.longHits > 0 && cb.longHits > 0) {
    const ordA = Math.min(1, orderedHits(a, b) / ca.longHits)
    const ordB = Math.min(1, orderedHits(b, a) / cb.longHits)
    lcs = Math.min(dice, (ca.cov * a.size * ordA + cb.cov * b.size * ordB) / total)
  }
  return {
    jaccard: dice / (2 - dice),
    dice,
    lcs,
    containmentAinB: ca.cov,
    containmentBinA: cb.cov,
    errorBound: Math.min(1, 2 * Math.max(ca.se, cb.se, diceSe)),
    level,
    anchorsA: a.short.length,
    anchorsB: b.short.length,
  }
}
