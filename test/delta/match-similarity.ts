import t from 'tap'
import fc from 'fast-check'
import { matchedSimilarity, type Match, type MatchList } from '../../src/delta/index.js'

/** The heaviest chain of matches in order in both files, by trying every subset (small lists). */
function bruteChain(ms: readonly Match[]): number {
  let best = 0
  for (let mask = 0; mask < 1 << ms.length; mask++) {
    let end = -1
    let sum = 0
    let ok = true
    for (let i = 0; i < ms.length && ok; i++) {
      if ((mask & (1 << i)) === 0) continue
      if (ms[i]!.seed < end) ok = false
      else {
        end = ms[i]!.seed + ms[i]!.length
        sum += ms[i]!.length
      }
    }
    if (ok) best = Math.max(best, sum)
  }
  return best
}

/** A match list in target order, not overlapping in the target, anywhere in a seed. */
const listArb = fc
  .array(fc.record({ gap: fc.integer({ min: 0, max: 50 }), length: fc.integer({ min: 1, max: 100 }), seed: fc.integer({ min: 0, max: 900 }) }), { maxLength: 9 })
  .chain((parts) => {
    let at = 0
    const matches = parts.map((p) => {
      const m = { target: at + p.gap, seed: p.seed, length: p.length }
      at = m.target + m.length
      return m
    })
    return fc.integer({ min: 0, max: 200 }).map((tail): MatchList => ({ targetSize: at + tail, seedSize: 1000, matches }))
  })

t.test('matched similarity: in [0, 1], lcs ≤ dice, jaccard = dice / (2 − dice), containment = covered / target; lcs is the heaviest chain in order', async (t) => {
  t.doesNotThrow(() => fc.assert(
    fc.property(listArb, (list) => {
      const m = matchedSimilarity(list)
      const covered = list.matches.reduce((n, x) => n + x.length, 0)
      for (const v of [m.jaccard, m.dice, m.lcs, m.containment]) if (!(v >= 0 && v <= 1)) return false
      if (m.lcs > m.dice + 1e-12) return false
      if (Math.abs(m.jaccard - m.dice / (2 - m.dice)) > 1e-12) return false
      if (list.targetSize > 0 && Math.abs(m.containment - covered / list.targetSize) > 1e-12) return false
      const chain = Math.min(m.dice, (2 * bruteChain(list.matches)) / (list.targetSize + list.seedSize))
      return Math.abs(m.lcs - chain) < 1e-12
    }),
    { numRuns: 500, seed: 3 },
  ))
})

t.test('matched similarity: known cases', async (t) => {
  const same = matchedSimilarity({ targetSize: 1000, seedSize: 1000, matches: [{ target: 0, seed: 0, length: 1000 }] })
  t.same(same, { jaccard: 1, dice: 1, lcs: 1, containment: 1 }, 'identical')
  const none = matchedSimilarity({ targetSize: 1000, seedSize: 500, matches: [] })
  t.same(none, { jaccard: 0, dice: 0, lcs: 0, containment: 0 }, 'nothing matched')
  // Two halves swapped: every byte is shared, but only one half is in order.
  const swapped = matchedSimilarity({ targetSize: 1000, seedSize: 1000, matches: [{ target: 0, seed: 500, length: 500 }, { target: 500, seed: 0, length: 500 }] })
  t.equal(swapped.dice, 1)
  t.equal(swapped.lcs, 0.5)
  // One seed half copied twice: the target is all copies, half the seed is used.
  const twice = matchedSimilarity({ targetSize: 1000, seedSize: 1000, matches: [{ target: 0, seed: 0, length: 500 }, { target: 500, seed: 0, length: 500 }] })
  t.equal(twice.containment, 1)
  t.equal(twice.dice, 0.75, '(1000 target + 500 seed bytes) / 2000')
  // A 90%-kept file with scattered 100-byte edits: chunk lists see almost nothing; matches see 90%.
  const edits: Match[] = []
  for (let at = 0; at < 100_000; at += 1000) edits.push({ target: at + 100, seed: at + 100, length: 900 })
  t.ok(Math.abs(matchedSimilarity({ targetSize: 100_000, seedSize: 100_000, matches: edits }).dice - 0.9) < 1e-9)
})
