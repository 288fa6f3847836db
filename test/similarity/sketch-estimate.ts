import t, { type Test } from 'tap'
import fc from 'fast-check'
import { decodeSketch, encodeSketch, estimateSimilarity, sketchBytes, type SketchEstimate } from '../../src/similarity/index.js'
import { GEAR } from '../../src/chunk/index.js'
import { randomBytes } from '../support/random.js'

/** Sketches with their exact windows (format 2). */
const W = { windows: true } as const

const METRICS = ['jaccard', 'dice', 'lcs', 'containmentAinB', 'containmentBinA'] as const
const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts))
const pts = (x: number): string => (x * 100).toFixed(1)

t.test('identical files → 1 by every metric, at any size', async (t) => {
  for (const n of [1, 63, 64, 200, 4096, 300_000]) {
    const s = sketchBytes(randomBytes(n, n))
    const r = estimateSimilarity(s, s)
    for (const m of METRICS) t.equal(r[m], 1, `${n} bytes: ${m}`)
  }
})

t.test('unrelated random files → ~0; symmetric; in [0, 1]; lcs ≤ dice; jaccard = d/(2 − d)', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 64, max: 40_000 }), fc.integer({ min: 64, max: 40_000 }), (seed, n, m) => {
      const a = sketchBytes(randomBytes(seed, n))
      const b = sketchBytes(randomBytes(seed + 1, m))
      const ab = estimateSimilarity(a, b)
      const ba = estimateSimilarity(b, a)
      for (const k of ['jaccard', 'dice', 'lcs'] as const) t.equal(ab[k], ba[k])
      t.equal(ab.containmentAinB, ba.containmentBinA)
      // Not exactly 0: an anchor's 32-bit hash (25 free bits at level 7) can match one of the
      // other file's by chance, and the edge correction counts it a little (seeds 91905 and
      // 91906, 34,196 and 39,570 bytes: dice 0.0065; about 1 pair in 10,000, worst 0.0073 in
      // 40,000). This was `=== 0`, and a fresh-clone CI run drew such a pair.
      t.ok(ab.dice < 0.02, `dice ${ab.dice}`)
      for (const k of METRICS) t.ok(ab[k] >= 0 && ab[k] <= 1)
    }),
    { numRuns: 30 },
  )
  const a = sketchBytes(randomBytes(1, 90_000))
  const b = sketchBytes(concat(randomBytes(1, 60_000), randomBytes(2, 50_000)))
  const r = estimateSimilarity(a, b)
  t.ok(r.lcs <= r.dice)
  t.ok(Math.abs(r.jaccard - r.dice / (2 - r.dice)) < 1e-12)
})

/** The truth within the estimate's own error bound, and within 5 points. */
function near(t: Test, r: SketchEstimate, m: (typeof METRICS)[number], truth: number, what: string): void {
  const err = Math.abs(r[m] - truth)
  t.ok(err <= Math.max(0.05, r.errorBound), `${what}: ${m} ${pts(r[m])} vs truth ${pts(truth)} (± ${pts(r.errorBound)})`)
}

t.test('known cases: a file inside another, 100-byte scattered edits, reordered small blocks', async (t) => {
  const a = randomBytes(31, 200_000)
  // A inside B, B twice A's size: all of A is in B, half of B is in A.
  const inside = estimateSimilarity(sketchBytes(a), sketchBytes(concat(randomBytes(32, 100_000), a, randomBytes(33, 100_000))))
  near(t, inside, 'containmentAinB', 1, 'A inside B')
  near(t, inside, 'containmentBinA', 0.5, 'A inside B')
  near(t, inside, 'dice', 2 / 3, 'A inside B')

  // Every 1000 bytes, 100 replaced: 90% of each file is shared, in pieces of 900 bytes, far
  // smaller than a transfer chunk (old chunk estimate: 0).
  const parts: Uint8Array[] = []
  for (let p = 0; p < a.length; p += 1000) parts.push(a.subarray(p, p + 900), randomBytes(p + 1, 100))
  const scattered = estimateSimilarity(sketchBytes(a), sketchBytes(concat(...parts)))
  for (const m of METRICS) near(t, scattered, m === 'jaccard' ? 'dice' : m, 0.9, 'scattered edits')

  // 2 KiB blocks in reverse order: every byte is shared, almost none in order.
  const blocks: Uint8Array[] = []
  for (let p = a.length - 2048; p > -2048; p -= 2048) blocks.push(a.subarray(Math.max(0, p), p + 2048))
  const reversed = estimateSimilarity(sketchBytes(a), sketchBytes(concat(...blocks)))
  near(t, reversed, 'dice', 1, 'reversed blocks')
  t.ok(reversed.lcs < 0.05, `reversed blocks: lcs ${pts(reversed.lcs)}`)
})

t.test('pieces of 32–63 bytes are not shared by the truth\'s rule: read near 0, not as shared; pieces of 64+ read whole', async (t) => {
  const a = randomBytes(51, 300_000)
  // B: A's bytes in pieces of `len`, each followed by 100 new bytes.
  const cut = (len: number, seed: number): Uint8Array => {
    const parts: Uint8Array[] = []
    for (let p = 0; p < a.length; p += len + 100) parts.push(a.subarray(p, p + len), randomBytes(seed + p, 100))
    return concat(...parts)
  }
  for (const len of [40, 48, 56]) {
    // Format 1 counts such a piece through Gear's identities (56: 31% of B); format 2 weighs its
    // len − 31 short-only positions half the edge slope (UNSURE_EDGE), its truth being 0.
    const b = sketchBytes(cut(len, len), W)
    const e = estimateSimilarity(sketchBytes(a, W), b).containmentBinA
    const before = estimateSimilarity(sketchBytes(a, W), decodeSketch(encodeSketch(b, 1))).containmentBinA
    const theory = ((len - 31) * 63) / 64 / (len + 100)
    t.ok(Math.abs(e - theory) < 0.05 && e < 0.6 * before, `pieces of ${len}: ${pts(e)} of B read as shared (truth 0; expected ${pts(theory)}; format 1 ${pts(before)})`)
  }
  const parts: Uint8Array[] = []
  let truthBytes = 0
  let p = 0
  for (let k = 0; p < a.length; k++) {
    const len = 32 + (k % 65)
    parts.push(a.subarray(p, p + len), randomBytes(900 + k, 100))
    if (len >= 64) truthBytes += Math.min(len, a.length - p)
    p += len + 100
  }
  // Pieces spread evenly over 32–96 bytes (scattered edits keeping 10–25%): a quarter of format 1's bias left.
  const spread = sketchBytes(concat(...parts), W)
  const truth = truthBytes / spread.size
  const e = estimateSimilarity(sketchBytes(a, W), spread).containmentBinA
  const before = estimateSimilarity(sketchBytes(a, W), decodeSketch(encodeSketch(spread, 1))).containmentBinA
  t.ok(before - truth > 0.06 && e - truth < 0.7 * (before - truth) && e > truth - 0.03, `pieces of 32–96: ${pts(e)} (format 1 ${pts(before)}), truth ${pts(truth)}`)
  for (const len of [100, 200]) {
    // Exact windows: pieces of 64+ read whole (format 1's ~53-byte "long" window read them 3–4 points low).
    const b = sketchBytes(cut(len, len), W)
    const e = estimateSimilarity(sketchBytes(a, W), b).containmentBinA
    const before = estimateSimilarity(sketchBytes(a, W), decodeSketch(encodeSketch(b, 1))).containmentBinA
    const truth = len / (len + 100)
    t.ok(Math.abs(e - truth) < 0.015 && truth - before > 0.025, `pieces of ${len}: ${pts(e)} (format 1 ${pts(before)}), truth ${pts(truth)}`)
  }
  // Sketches of format 1 (an older peer) on either side: the estimate as before, every short-only hit an edge.
  const e56 = estimateSimilarity(sketchBytes(a, W), decodeSketch(encodeSketch(sketchBytes(cut(56, 56)), 1)))
  t.ok(e56.containmentBinA > 0.25, `format 1: pieces of 56 read ${pts(e56.containmentBinA)}, as before`)
})

t.test('a small file against a big one compares at the big one\'s level, with a wider bound', async (t) => {
  const big = randomBytes(41, 4 << 20)
  const small = big.subarray(1 << 20, (1 << 20) + 300_000)
  const r = estimateSimilarity(sketchBytes(small), sketchBytes(big))
  near(t, r, 'containmentAinB', 1, 'slice of a big file')
  t.ok(r.level > 0 && r.anchorsA > 0)
})

t.test('a run of a short period after different bytes is shared whole (repeats merge only on equal 64-byte windows)', async (t) => {
  // A 16-byte period whose Gear h is sampled inside the run (its steady h has ≥ 12 leading zeros).
  const sampled = (pat: Uint8Array): boolean => {
    let h = 0
    let most = 0
    for (let i = 0; i < 32 + 32; i++) {
      h = ((h << 1) + GEAR[pat[i % 16]!]!) | 0
      if (i >= 48) most = Math.max(most, Math.clz32(h))
    }
    return most >= 12
  }
  let seed = 1000
  while (!sampled(randomBytes(seed, 16))) seed++
  const pattern = randomBytes(seed, 16)
  const run = concat(...Array.from({ length: 1024 }, () => pattern)) // 16 KiB
  const tail = randomBytes(74, 16_384)
  const a = concat(randomBytes(72, 32_768), run, tail)
  const b = concat(randomBytes(73, 32_768), run, tail)
  const [sa, sb] = [sketchBytes(a, W), sketchBytes(b, W)]
  // Merged on Gear's identities alone (56 bytes), the run's first anchor, whose 64-byte window
  // reaches into the bytes before it, took the whole run's count, and missed in the other file.
  const heaviest = (s: typeof sa): number => s.windows!.w64[s.count.indexOf(Math.max(...s.count))]!
  t.ok(Math.max(...sb.count) > 100, `the run is one anchor of count ${Math.max(...sb.count)}`)
  t.equal(heaviest(sb), heaviest(sa), 'its 64-byte window is the run\'s own, the same in both files')
  t.ok(estimateSimilarity(sa, sb).containmentAinB > 0.75, 'so the run counts as shared')
})
