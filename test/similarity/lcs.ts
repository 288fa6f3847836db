import t from 'tap'
import fc from 'fast-check'
import { lcsSimilarity, lcsWeight, type WeightedChunk } from '../../src/similarity/index.js'
import type { Fingerprint } from '../../src/types.js'

/** The O(mn) dynamic program the seed uses: the reference Hunt–Szymanski must agree with. */
function lcsDp(a: readonly WeightedChunk[], b: readonly WeightedChunk[]): number {
  let prev = new Float64Array(b.length + 1)
  for (let i = 1; i <= a.length; i++) {
    const cur = new Float64Array(b.length + 1)
    for (let j = 1; j <= b.length; j++) {
      cur[j] = a[i - 1]!.fp === b[j - 1]!.fp ? prev[j - 1]! + a[i - 1]!.length : Math.max(prev[j]!, cur[j - 1]!)
    }
    prev = cur
  }
  return prev[b.length]!
}

// Few distinct fingerprints so that matches (and repeats) are common; a fingerprint's weight
// is fixed, as for real chunks (same content, same length).
const chunkArb = fc.integer({ min: 0, max: 7 }).map((k): WeightedChunk => ({ fp: `fp${k}` as Fingerprint, length: 10 + k * 7 }))
const seqArb = fc.array(chunkArb, { maxLength: 40 })

t.test('Hunt–Szymanski LCS equals the O(mn) DP on small random inputs', async (t) => {
  fc.assert(
    fc.property(seqArb, seqArb, (a, b) => {
      t.equal(lcsWeight(a, b), lcsDp(a, b))
    }),
    { numRuns: 500 },
  )
})

t.test('lcs(a, a) = 1, symmetric, in [0, 1]', async (t) => {
  fc.assert(
    fc.property(seqArb, seqArb, (a, b) => {
      if (a.length) t.equal(lcsSimilarity(a, a), 1)
      const s = lcsSimilarity(a, b)
      t.equal(s, lcsSimilarity(b, a))
      t.ok(s >= 0 && s <= 1)
    }),
    { numRuns: 200 },
  )
})

t.test('long runs of one fingerprint stay fast and give a lower bound', async (t) => {
  const zeros = (n: number) => Array.from({ length: n }, (): WeightedChunk => ({ fp: 'zero' as Fingerprint, length: 100 }))
  const a = zeros(20000)
  const b = zeros(20000)
  const start = Date.now()
  const w = lcsWeight(a, b)
  t.ok(Date.now() - start < 5000, 'band keeps it near-linear')
  t.equal(w, 2000000, 'identical runs still match in full')
})

t.test('keys chosen by a peer to share their first characters stay fast (the whole key is hashed)', async (t) => {
  // A hostile sketch or chunk list: 60,000 distinct keys alike in their first 8 characters (and
  // 56). Hashing only those 8 put them all in one probe cluster: 80,000 took 34 s.
  const items = (n: number): WeightedChunk[] =>
    Array.from({ length: n }, (_, i) => ({ fp: ('a'.repeat(56) + i.toString(16).padStart(8, '0')) as Fingerprint, length: 10 }))
  const a = items(60_000)
  const start = Date.now()
  const w = lcsWeight(a, [...a].reverse().slice(0, 10).concat(a.slice(0, 1000)))
  t.ok(Date.now() - start < 5000, `${Date.now() - start} ms`)
  t.equal(w, 10 * 1000, 'the first 1,000 in order (the reversed ten come after them in A)')
})
