import t from 'tap'
import fc from 'fast-check'
import { blockSizeFor, blockSizeForChange, changedRegions, decide, EDITS_PER_UNSHARED_CHUNK, MAX_BLOCK, MIN_BLOCK, MIN_MEASURABLE_CHUNKS, passesThreshold, secondSeed, smallestSeedBytes } from '../../src/delta/index.js'
import { metricByName, profile, type WeightedChunk } from '../../src/similarity/index.js'
import type { Fingerprint } from '../../src/types.js'

const c = (fp: string, length = 100): WeightedChunk => ({ fp: fp as Fingerprint, length })
const seq = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => c(`${prefix}${i}`))
const dice = metricByName('dice')

t.test('no candidates: whole file, no seed', async (t) => {
  t.same(decide(profile(seq('a', 4)), [], dice, 0.5), { method: 'whole', seed: null, similarity: 0 })
})

t.test('the candidate supplying most of the target wins, and the rule applies to it', async (t) => {
  const target = profile([...seq('a', 3), ...seq('b', 7)])
  const cands = [
    { path: 'a', profile: profile(seq('a', 10)) }, // supplies 30%
    { path: 'b', profile: profile(seq('b', 8)) }, // supplies 70%
  ]
  const d = decide(target, cands, dice, 0.5)
  t.equal(d.seed, 'b')
  t.equal(d.method, 'delta')
  t.ok(Math.abs(d.similarity - (2 * 700) / (1000 + 800)) < 1e-12)
})

t.test('below the threshold: whole, but the seed and similarity are reported', async (t) => {
  const target = profile([...seq('a', 2), ...seq('n', 8)])
  const d = decide(target, [{ path: 'a', profile: profile(seq('a', 10)) }], dice, 0.5)
  t.match(d, { method: 'whole', seed: 'a' })
  t.ok(d.similarity > 0 && d.similarity < 0.5)
})

t.test('jaccard is stricter than dice: 60% of a same-size seed is whole by jaccard, delta by dice', async (t) => {
  const target = profile([...seq('s', 6), ...seq('n', 4)])
  const seed = [{ path: 's', profile: profile(seq('s', 10)) }]
  t.equal(decide(target, seed, metricByName('jaccard'), 0.5).method, 'whole')
  t.equal(decide(target, seed, dice, 0.5).method, 'delta')
})

t.test('ties keep the first candidate (the caller lists the same path first)', async (t) => {
  const target = profile(seq('a', 5))
  const same = profile(seq('a', 5))
  t.equal(decide(target, [{ path: 'same', profile: same }, { path: 'other', profile: same }], dice, 0.5).seed, 'same')
})

t.test('changedRegions counts runs of target chunks the seed lacks', async (t) => {
  const seed = profile(seq('s', 10))
  const target = profile([c('s0'), c('x1'), c('x2'), c('s3'), c('s4'), c('y5'), c('s6'), ...seq('z', 4)])
  t.equal(changedRegions(target, seed), 3, 'x1-x2, y5, and the appended z run')
  t.equal(changedRegions(seed, seed), 0)
  t.equal(changedRegions(profile(seq('n', 5)), seed), 5 * EDITS_PER_UNSHARED_CHUNK, 'nothing shared: edits guessed in every chunk')
  t.equal(changedRegions(target, seed, 8), 8 + 1 + 1, 'from a 1/8 sample: a lone missing chunk stands for 8 edits, a run for one region')
})

t.test('blockSizeForChange: many scattered regions get small blocks, one region big ones', async (t) => {
  const size = 50_000_000
  t.ok(blockSizeForChange(size, 100) < blockSizeFor(size) / 3, 'scattered edits: well below √size')
  t.ok(blockSizeForChange(size, 1) > blockSizeFor(size), 'a single edit: above √size')
  t.equal(blockSizeForChange(100, 1000), MIN_BLOCK)
  t.equal(blockSizeForChange(1e15, 0), MAX_BLOCK)
  t.equal(blockSizeForChange(size, 100) % 64, 0)
})

t.test('a target too small to measure gets a delta from the same path; a big one follows the rule', async (t) => {
  const seed = [{ path: 'same', profile: profile(seq('s', 3)) }]
  const small = profile([c('s0'), c('x1'), c('x2')]) // dice 1/3: below 0.5
  t.match(decide(small, seed, dice, 0.5, { samePath: 'same' }), { method: 'delta', seed: 'same', note: /too small to measure, delta from its earlier version$/ })
  t.match(decide(small, seed, dice, 0.5, { samePath: 'same', samePathIs: 'a file of the same name' }), { note: /delta from a file of the same name$/ }, 'the note says what the seed is')
  t.match(decide(small, seed, dice, 0.5), { method: 'whole' }, 'another path: the rule as usual')
  const big = profile([...seq('s', 3), ...seq('x', MIN_MEASURABLE_CHUNKS)])
  t.match(decide(big, [{ path: 'same', profile: profile(seq('s', 3)) }], dice, 0.5, { samePath: 'same' }), { method: 'whole' })
})

t.test('secondSeed: the candidate that supplies most of what the first does not, when it adds ≥ 10%', async (t) => {
  // 10 chunks: 5 of a, 3 of b, 1 of c, 1 new.
  const target = profile([...seq('a', 5), ...seq('b', 3), c('c0'), c('new')])
  const cands = [
    { path: 'a', profile: profile(seq('a', 8)) },
    { path: 'b', profile: profile(seq('b', 10)) },
    { path: 'c', profile: profile(seq('c', 2)) },
    { path: 'a-again', profile: profile(seq('a', 5)) }, // supplies only what a does
  ]
  const s = secondSeed(target, cands, 'a', dice)
  t.equal(s?.path, 'b', 'b adds 30%; c 10%; a copy of a nothing')
  t.ok(Math.abs(s!.adds - 0.3) < 1e-12)
  // The pair as one seed of 18 chunks: dice = 2 × 8 / (10 + 18).
  t.ok(Math.abs(s!.similarity - (2 * 8) / (10 + 18)) < 1e-12)
  t.equal(secondSeed(target, cands.filter((x) => x.path !== 'b'), 'a', dice)?.path, 'c', 'c adds exactly 10%: enough')
  t.equal(secondSeed(target, [cands[0]!, cands[3]!], 'a', dice), undefined, 'nothing added: no second seed')
  t.equal(secondSeed(profile([...seq('a', 19), c('c0')]), cands, 'a', dice), undefined, '5% is not worth a signature')
  t.equal(secondSeed(target, cands, 'unknown', dice), undefined, 'a first seed that is not a candidate')
})

t.test('secondSeed property: what the pair adds never exceeds what the target lacks from the first', async (t) => {
  const fc = (await import('fast-check')).default
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 40 }), fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 40 }), fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 40 }), (tg, a, b) => {
      const target = profile(tg.map((i) => c(`x${i}`)))
      const cands = [{ path: 'a', profile: profile(a.map((i) => c(`x${i}`))) }, { path: 'b', profile: profile(b.map((i) => c(`x${i}`))) }]
      const s = secondSeed(target, cands, 'a', dice)
      const covered = (set: readonly number[]) => {
        const left = new Map<number, number>()
        for (const i of set) left.set(i, (left.get(i) ?? 0) + 1)
        let n = 0
        for (const i of tg) if ((left.get(i) ?? 0) > 0) { n++; left.set(i, left.get(i)! - 1) }
        return n / tg.length
      }
      const adds = covered([...a, ...b]) - covered(a)
      if (adds >= 0.1 - 1e-9) return s !== undefined && s.path === 'b' && Math.abs(s.adds - adds) < 1e-9
      return s === undefined
    }),
    { numRuns: 300, seed: 7 },
  )
  t.pass('held for 300 random targets and seeds')
})

t.test('smallestSeedBytes property: a seed smaller, wholly inside the target, never passes; nor a pair of them', async (t) => {
  const metrics = ['dice', 'jaccard', 'lcs', 'containment'] as const
  await fc.assert(
    fc.property(
      fc.integer({ min: 8, max: 400 }), // target chunks
      fc.integer({ min: 1, max: 4096 }), // chunk length
      fc.double({ min: 0.05, max: 1, noNaN: true }), // threshold
      fc.constantFrom(...metrics),
      (n, len, threshold, name) => {
        const metric = metricByName(name)
        const targetChunks = Array.from({ length: n }, (_, i) => c(`t${i}`, len))
        const target = profile(targetChunks)
        const floor = smallestSeedBytes(n * len, threshold)
        // The largest seeds under the floor, each a run of the target's own chunks, the two apart.
        const k = Math.min(n, Math.max(0, Math.ceil(floor / len) - 1))
        if (k === 0) return
        const a = { path: 'a', profile: profile(targetChunks.slice(0, k)) }
        const b = { path: 'b', profile: profile(targetChunks.slice(n - k)) }
        t.ok(k * len < floor)
        const alone = decide(target, [a, b], metric, threshold)
        if (alone.method === 'delta') t.fail(`${name} ${threshold}: ${k} of ${n} chunks passed alone (${alone.similarity})`)
        const pair = secondSeed(target, [a, b], 'a', metric)
        if (pair !== undefined && passesThreshold(pair.similarity, threshold)) t.fail(`${name} ${threshold}: a pair of ${k} of ${n} passed (${pair.similarity})`)
      },
    ),
    { numRuns: 400 },
  )
  t.equal(smallestSeedBytes(1 << 20, 0), 0, 'threshold 0: any file may be a seed')
  t.equal(smallestSeedBytes(1 << 20, 0.5), 87381, 'a new 1 MiB file at the default threshold: from ~85 KiB up')
})
