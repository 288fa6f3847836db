/**
 * Similarity metrics (issue 2): LCS speed on 130k × 130k chunk lists (goal < 100 ms), every
 * metric on two 1 GiB-equivalent lists, and accuracy against a known shared fraction for
 * each chunker. Seeded; median of N after a warm-up.
 */
import {
  BlockTable,
  cdcCutter,
  chunkBytes,
  chunkParams,
  fspCutter,
  sbcBaseChunks,
  sbcChunks,
  type ChunkerKind,
} from '../src/chunk/index.js'
import { fingerprint, type Fingerprint } from '../src/hash/index.js'
import {
  compare,
  containment,
  dice,
  jaccard,
  lcsSimilarity,
  profile,
  toMultiset,
  type WeightedChunk,
} from '../src/similarity/index.js'
import type { Chunk } from '../src/types.js'
import { inPieces, KiB, MiB, seededBytes, xorshift32 as rng } from './support/data.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'
import { time } from './support/timing.js'

/** Chunks of a 1 GiB file at the default avg 8 KiB. */
const LIST_LENGTH = 131072

/** A distinct fingerprint per id (hash of its 4 bytes). */
function fpOf(id: number): Fingerprint {
  return fingerprint(new Uint8Array(new Uint32Array([id]).buffer))
}

/**
 * Two chunk lists of `n` chunks (lengths 2–64 KiB around 8 KiB): B is A with a seeded
 * (1 − overlap) share of its chunks replaced by new ones, so LCS and the multisets share
 * `overlap` of the chunks, in order.
 */
function listPair(n: number, overlap: number, seed: number): [WeightedChunk[], WeightedChunk[]] {
  const next = rng(seed)
  const a: WeightedChunk[] = []
  const b: WeightedChunk[] = []
  for (let i = 0; i < n; i++) {
    const length = 2048 + (next() % 12288)
    const fp = fpOf(i)
    a.push({ length, fp })
    b.push(next() / 2 ** 32 < overlap ? { length, fp } : { length, fp: fpOf(n + i) })
  }
  return [a, b]
}

async function speed(): Promise<void> {
  const lcsRows: Cell[][] = []
  for (const overlap of [0.95, 0.5]) {
    const [a, b] = listPair(LIST_LENGTH, overlap, 7)
    let sim = 0
    const t = await time(() => (sim = lcsSimilarity(a, b)), { warmup: 1, runs: 5 })
    lcsRows.push([`${overlap * 100}%`, LIST_LENGTH, t.medianMs, sim])
  }
  printTable(
    'LCS (Hunt–Szymanski) on 130k × 130k chunk lists (median of 5; goal < 100 ms)',
    ['overlap', 'chunks each', 'ms', 'lcs'],
    lcsRows,
    3,
  )

  const [a, b] = listPair(LIST_LENGTH, 0.9, 8)
  const ma = toMultiset(a)
  const mb = toMultiset(b)
  const pa = profile(a)
  const pb = profile(b)
  const rows: Cell[][] = []
  const measure = async (name: string, fn: () => unknown): Promise<void> => {
    rows.push([name, (await time(fn, { warmup: 1, runs: 5 })).medianMs])
  }
  await measure('toMultiset, both lists', () => [toMultiset(a), toMultiset(b)])
  await measure('jaccard (multisets built)', () => jaccard(ma, mb))
  await measure('dice (multisets built)', () => dice(ma, mb))
  await measure('containment (multisets built)', () => containment(ma, mb))
  await measure('lcs', () => lcsSimilarity(a, b))
  await measure('compare(): all metrics from profiles', () => compare(pa, pb))
  await measure('profile both + compare()', () => compare(profile(a), profile(b)))
  printTable('Every metric on two 1 GiB-equivalent lists (131072 chunks each, 90% shared; median of 5)', ['step', 'ms'], rows)
}

/**
 * B of the same size as A, made of A's segments (16–128 KiB, in order) and new random ones,
 * keeping segments from A until `fraction` of B's bytes come from A. New segments differ in
 * length from the ones they replace, so later content moves (as real edits move it).
 */
function sharedPair(fraction: number, seed: number): { a: Uint8Array; b: Uint8Array; trueFraction: number } {
  const a = seededBytes(seed, 8 * MiB)
  const next = rng(seed * 31 + 1)
  const parts: Uint8Array[] = []
  let kept = 0
  let total = 0
  for (let pos = 0; pos < a.length; ) {
    const len = Math.min(a.length - pos, 16 * KiB + (next() % (112 * KiB)))
    if (kept <= fraction * (total + len)) {
      parts.push(a.subarray(pos, pos + len))
      kept += len
      total += len
    } else {
      const fresh = seededBytes(next(), Math.max(1, len + (next() % 4096) - 2048))
      parts.push(fresh)
      total += fresh.length
    }
    pos += len
  }
  const b = new Uint8Array(total)
  let o = 0
  for (const p of parts) {
    b.set(p, o)
    o += p.length
  }
  return { a, b, trueFraction: kept / total }
}

async function chunksOf(kind: ChunkerKind, a: Uint8Array, b: Uint8Array): Promise<[Chunk[], Chunk[]]> {
  if (kind === 'cdc') return [chunkBytes(a, cdcCutter(chunkParams())), chunkBytes(b, cdcCutter(chunkParams()))]
  const fsp = chunkParams({ kind: 'fsp' })
  if (kind === 'fsp') return [chunkBytes(a, fspCutter(fsp)), chunkBytes(b, fspCutter(fsp))]
  const table = new BlockTable(fsp.avg)
  return [await sbcBaseChunks(inPieces(a, MiB), table), await sbcChunks(inPieces(b, MiB), table)]
}

async function accuracy(): Promise<void> {
  const rows: Cell[][] = []
  for (const kind of ['cdc', 'fsp', 'sbc'] as const) {
    for (let k = 1; k <= 9; k++) {
      const { a, b, trueFraction } = sharedPair(k / 10, 100 + k)
      const [ca, cb] = await chunksOf(kind, a, b)
      const r = compare(profile(cb), profile(ca))
      rows.push([kind, trueFraction, trueFraction / (2 - trueFraction), r.jaccard, r.dice, r.lcs, r.containmentAinB])
    }
  }
  printTable(
    'Accuracy: B (8 MiB) takes a known share of its bytes from A; each metric of B against A, avg 8 KiB.\n' +
      'Exact values: dice, lcs, containment = shared; jaccard = shared / (2 − shared).',
    ['chunker', 'shared', 'exact jaccard', 'jaccard', 'dice', 'lcs', 'containment'],
    rows,
    3,
  )
}

export async function run(): Promise<void> {
  printEnvironment()
  await speed()
  await accuracy()
}
