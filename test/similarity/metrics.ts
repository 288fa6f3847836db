import t, { type Test } from 'tap'
import fc from 'fast-check'
import { compare, containment, dice, jaccard, metricByName, profile, toMultiset, type WeightedChunk } from '../../src/similarity/index.js'
import type { Fingerprint } from '../../src/types.js'

const chunkArb = fc.integer({ min: 0, max: 12 }).map((k): WeightedChunk => ({ fp: `fp${k}` as Fingerprint, length: 1 + k * 13 }))
const seqArb = fc.array(chunkArb, { minLength: 1, maxLength: 50 })
const near = (t: Test, a: number, b: number, msg?: string) => t.ok(Math.abs(a - b) < 1e-12, msg ?? `${a} ≈ ${b}`)

t.test('identities: sim(a, a) = 1; jaccard, dice, lcs symmetric; all in [0, 1]', async (t) => {
  fc.assert(
    fc.property(seqArb, seqArb, (a, b) => {
      const [pa, pb] = [profile(a), profile(b)]
      const self = compare(pa, pa)
      for (const v of [self.jaccard, self.dice, self.lcs, self.containmentAinB]) t.equal(v, 1)
      const ab = compare(pa, pb)
      const ba = compare(pb, pa)
      t.equal(ab.jaccard, ba.jaccard)
      t.equal(ab.dice, ba.dice)
      t.equal(ab.lcs, ba.lcs)
      t.equal(ab.containmentAinB, ba.containmentBinA)
      for (const v of Object.values(ab)) t.ok(v >= 0)
      for (const v of [ab.jaccard, ab.dice, ab.lcs, ab.containmentAinB, ab.containmentBinA]) t.ok(v <= 1)
      near(t, ab.dice, (2 * ab.jaccard) / (1 + ab.jaccard), 'dice = 2j/(1+j)')
      t.ok(ab.lcs <= ab.dice + 1e-12, 'lcs ≤ dice')
    }),
    { numRuns: 300 },
  )
})

t.test('disjoint files give 0 by every metric', async (t) => {
  const a = [{ fp: 'x' as Fingerprint, length: 10 }]
  const b = [{ fp: 'y' as Fingerprint, length: 10 }]
  const r = compare(profile(a), profile(b))
  t.same([r.jaccard, r.dice, r.lcs, r.containmentAinB, r.containmentBinA, r.sharedBytes], [0, 0, 0, 0, 0, 0])
})

t.test('duplicates and chunk lengths weigh as the formulas say', async (t) => {
  const c = (fp: string, length: number): WeightedChunk => ({ fp: fp as Fingerprint, length })
  // A = {x×2 (len 10), y (len 30)}, B = {x×1, z (len 50)}
  const A = toMultiset([c('x', 10), c('x', 10), c('y', 30)])
  const B = toMultiset([c('x', 10), c('z', 50)])
  near(t, jaccard(A, B), 10 / (20 + 30 + 50)) // Σ min = 10; Σ max = 20 + 30 + 50
  near(t, dice(A, B), (2 * 10) / (50 + 60))
  near(t, containment(A, B), 10 / 50)
  near(t, containment(B, A), 10 / 60)
})

t.test('DESIGN.md example: 60% of a same-size seed → jaccard 0.43, dice 0.6', async (t) => {
  const c = (fp: string): WeightedChunk => ({ fp: fp as Fingerprint, length: 100 })
  const seed = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map(c)
  const target = ['a', 'b', 'c', 'd', 'e', 'f', 'n1', 'n2', 'n3', 'n4'].map(c)
  const r = compare(profile(target), profile(seed))
  near(t, r.jaccard, 6 / 14)
  near(t, r.dice, 0.6)
  near(t, r.lcs, 0.6)
})

t.test('metricByName: unknown names are USAGE errors listing the choices', async (t) => {
  t.throws(() => metricByName('cosine'), { code: 'USAGE', message: /jaccard, dice, lcs, containment/ })
  const p = profile([{ fp: 'x' as Fingerprint, length: 1 }])
  t.equal(metricByName('lcs')(p, p), 1)
})
