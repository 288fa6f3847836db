/**
 * Similarity accuracy (issue 10): each metric as estimated from 8 KiB CDC chunks (old) and from
 * the sketch (new), against the truth measured on the bytes (share of a file's bytes in
 * substrings ≥ 64 bytes the other file holds), per edit pattern; MAE in points; what each
 * rule would send; the sketch's speed and size. Seeded. `npm run bench -- accuracy [--large | --quick]`
 * (--large adds 8 MiB pairs: slower, the truth holds every window in a Set).
 */
import { cdcCutter, chunkBytes, chunkParams } from '../src/chunk/index.js'
import { compare, estimateSimilarity, profile, sketchBytes, METRIC_NAMES, type MetricName } from '../src/similarity/index.js'
import { decodeSketch, encodeSketch, type SketchEstimate } from '../src/similarity/index.js'
import { corpusOrigin, editedPair, loadCorpus, PATTERNS, type DataKind, type EditedPair, type PatternName } from './support/edit-patterns.js'
import { KiB, MiB, seededBytes } from './support/data.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'
import { mbps, time } from './support/timing.js'

type Scores = Record<MetricName, number>

interface Row {
  readonly pattern: PatternName
  readonly kind: DataKind
  readonly size: number
  readonly keep: number
  readonly truth: Scores
  readonly old: Scores
  readonly sketch: Scores
  /** the sketch of format 1 (Gear's identities only: what dsync before protocol 5 sends, and the index keeps) */
  readonly format1: Scores
  readonly bound: number
  readonly bBytes: number
}

/** Containment is of B (the target) in A (the seed), as the rule uses it. */
function truthOf(p: EditedPair): Scores {
  return { jaccard: p.jaccard, dice: p.dice, lcs: p.lcs, containment: p.covB }
}

function oldOf(p: EditedPair): Scores {
  const cut = cdcCutter(chunkParams())
  const r = compare(profile(chunkBytes(p.a, cut)), profile(chunkBytes(p.b, cut)))
  return { jaccard: r.jaccard, dice: r.dice, lcs: r.lcs, containment: r.containmentBinA }
}

function scoresOf(r: SketchEstimate): Scores {
  return { jaccard: r.jaccard, dice: r.dice, lcs: r.lcs, containment: r.containmentBinA }
}

function sketchOf(p: EditedPair): { scores: Scores; format1: Scores; bound: number } {
  const [sa, sb] = [sketchBytes(p.a, { windows: true }), sketchBytes(p.b, { windows: true })]
  const r = estimateSimilarity(sa, sb)
  const f1 = estimateSimilarity(decodeSketch(encodeSketch(sa, 1)), decodeSketch(encodeSketch(sb, 1)))
  return { scores: scoresOf(r), format1: scoresOf(f1), bound: r.errorBound }
}

const KEEPS = [0.1, 0.25, 0.5, 0.75, 0.9]
const quick = process.argv.includes('--quick')

function measure(sizes: readonly number[]): Row[] {
  const text = loadCorpus()
  console.log(`text pairs cut from: ${corpusOrigin()}`)
  const rows: Row[] = []
  let seed = 1000
  for (const pattern of PATTERNS) {
    for (const kind of ['random', 'text'] as const) {
      for (const size of sizes) {
        // Small files are noisier: more pairs per point.
        const repeats = size <= 64 * KiB && !quick ? 3 : 1
        for (const keep of KEEPS) {
          for (let r = 0; r < repeats; r++) {
            const p = editedPair(pattern, kind, size, keep, seed++, text)
            const s = sketchOf(p)
            rows.push({ pattern, kind, size, keep, truth: truthOf(p), old: oldOf(p), sketch: s.scores, format1: s.format1, bound: s.bound, bBytes: p.b.length })
          }
        }
      }
    }
  }
  return rows
}

const pts = (x: number): number => Math.round(x * 1000) / 10
const sizeName = (n: number): string => (n >= MiB ? `${n / MiB} MiB` : `${n / KiB} KiB`)

function printPairs(rows: readonly Row[], size: number): void {
  const shown = rows.filter((r) => r.size === size)
  printTable(
    `True fraction vs each metric, ${sizeName(size)} pairs (points; t = truth, o = old 8 KiB chunks, s = sketch ± its bound)`,
    ['pattern', 'data', 'keep', 't cont', 'o cont', 's cont', 't dice', 'o dice', 's dice', 't lcs', 'o lcs', 's lcs', '± bound'],
    shown.map((r) => [
      r.pattern, r.kind, `${r.keep * 100}%`,
      pts(r.truth.containment), pts(r.old.containment), pts(r.sketch.containment),
      pts(r.truth.dice), pts(r.old.dice), pts(r.sketch.dice),
      pts(r.truth.lcs), pts(r.old.lcs), pts(r.sketch.lcs), pts(r.bound),
    ]),
  )
}

function mae(rows: readonly Row[], which: 'old' | 'sketch' | 'format1', m: MetricName): number {
  return rows.length === 0 ? 0 : pts(rows.reduce((s, r) => s + Math.abs(r[which][m] - r.truth[m]), 0) / rows.length)
}

function maxErr(rows: readonly Row[], m: MetricName): number {
  return pts(Math.max(0, ...rows.map((r) => Math.abs(r.sketch[m] - r.truth[m]))))
}

function printMae(rows: readonly Row[], sizes: readonly number[]): void {
  const table: Cell[][] = []
  const groups: [string, readonly Row[]][] = [
    ...PATTERNS.map((p): [string, Row[]] => [p, rows.filter((r) => r.pattern === p)]),
    ...sizes.map((s): [string, Row[]] => [`all, ${sizeName(s)}`, rows.filter((r) => r.size === s)]),
    ['all', rows],
  ]
  for (const [name, rs] of groups) {
    table.push([name, rs.length, ...METRIC_NAMES.map((m) => mae(rs, 'old', m)), ...METRIC_NAMES.map((m) => mae(rs, 'sketch', m)), Math.max(...METRIC_NAMES.map((m) => maxErr(rs, m)))])
  }
  printTable(
    'MAE against the truth, points (old: 8 KiB CDC chunks; sketch: src/similarity/sketch.ts); goal ≤ 3 per metric and pattern',
    ['pattern', 'pairs', 'old jac', 'old dice', 'old lcs', 'old cont', 'new jac', 'new dice', 'new lcs', 'new cont', 'new max err'],
    table,
  )
}

/** The exact windows' worth, in the same run: sketches of format 1 against format 2. */
function printFormats(rows: readonly Row[]): void {
  const wrong = (which: 'sketch' | 'format1', m: MetricName): number => rows.filter((r) => r[which][m] >= 0.5 !== r.truth[m] >= 0.5).length
  const table: Cell[][] = PATTERNS.map((p) => {
    const rs = rows.filter((r) => r.pattern === p)
    return [p, ...METRIC_NAMES.map((m) => mae(rs, 'format1', m)), ...METRIC_NAMES.map((m) => mae(rs, 'sketch', m))]
  })
  table.push(['wrong calls (≥ 50%)', ...METRIC_NAMES.map((m) => wrong('format1', m)), ...METRIC_NAMES.map((m) => wrong('sketch', m))])
  printTable(
    'Sketch format 1 (Gear\'s identities) vs format 2 (exact windows), MAE in points per pattern, then the rules\' wrong calls',
    ['pattern', 'f1 jac', 'f1 dice', 'f1 lcs', 'f1 cont', 'f2 jac', 'f2 dice', 'f2 lcs', 'f2 cont'],
    table,
  )
}

/**
 * What each rule (metric ≥ 50%) would send for every B, with the old estimate, the sketch and
 * the truth: bytes on the wire taken as B's unshared bytes for a delta (literals, before
 * compression; COPY ops are nearly free) and all of B when whole.
 */
function printRules(rows: readonly Row[]): void {
  const sent = (r: Row, s: Scores, m: MetricName): number => (s[m] >= 0.5 ? (1 - r.truth.containment) * r.bBytes : r.bBytes)
  const table: Cell[][] = METRIC_NAMES.map((m) => {
    const cost = (which: 'old' | 'sketch' | 'truth'): number => rows.reduce((s, r) => s + sent(r, r[which], m), 0) / MiB
    const wrong = (which: 'old' | 'sketch'): number => rows.filter((r) => r[which][m] >= 0.5 !== r.truth[m] >= 0.5).length
    return [m, cost('old'), cost('sketch'), cost('truth'), wrong('old'), wrong('sketch')]
  })
  const all = rows.reduce((s, r) => s + r.bBytes, 0) / MiB
  printTable(
    `What each rule (metric ≥ 50%) would send for the ${rows.length} targets (${all.toFixed(1)} MiB in all; MiB of literals + whole files)`,
    ['rule', 'old MiB', 'sketch MiB', 'truth MiB', 'old wrong calls', 'sketch wrong calls'],
    table,
    2,
  )
}

async function printSpeed(): Promise<void> {
  const rows: Cell[][] = []
  for (const size of [4 * KiB, 64 * KiB, MiB, 64 * MiB]) {
    const data = seededBytes(9, size)
    const runs = size >= 64 * MiB ? 3 : 9
    const reps = Math.max(1, Math.round((4 * MiB) / size))
    let bytes = 0
    const t = await time(() => {
      for (let k = 0; k < reps; k++) bytes = encodeSketch(sketchBytes(data, { windows: true })).length
    }, { warmup: 1, runs })
    const s = sketchBytes(data)
    rows.push([sizeName(size), s.level, s.short.length, bytes, Math.round(bytes / (size / MiB)), mbps(size * reps, t.medianCpuMs)])
  }
  printTable('Sketch size and speed (random data; MB/s per CPU second, median)', ['file', 'level', 'anchors', 'sketch bytes', 'bytes per MiB', 'MB/s'], rows)
}

export async function run(): Promise<void> {
  printEnvironment()
  const sizes = quick ? [4 * KiB, 64 * KiB] : [4 * KiB, 64 * KiB, MiB, ...(process.argv.includes('--large') ? [8 * MiB] : [])]
  const rows = measure(sizes)
  printPairs(rows, quick ? 64 * KiB : MiB)
  printMae(rows, sizes)
  printFormats(rows)
  printRules(rows)
  if (!quick) await printSpeed()
}
