import t from 'tap'
import fc from 'fast-check'
import { decodeMatches, encodeMatches, holesOf, MAX_MATCHES, type MatchList } from '../../src/delta/index.js'
import { randomBytes } from '../support/random.js'

/** A valid random match list: matches in target order, inside both files. */
const listArb: fc.Arbitrary<MatchList> = fc
  .record({ seedSize: fc.integer({ min: 1, max: 1 << 40 }), steps: fc.array(fc.tuple(fc.nat(5000), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), fc.integer({ min: 1, max: 5000 })), { maxLength: 50 }), tail: fc.nat(5000) })
  .map(({ seedSize, steps, tail }) => {
    let t = 0
    const matches = steps.map(([gap, at, len]) => {
      const length = Math.min(len, seedSize)
      const seed = Math.floor(at * (seedSize - length + 1))
      const m = { target: t + gap, seed, length }
      t = m.target + length
      return m
    })
    return { seedSize, targetSize: t + tail, matches }
  })

t.test('decodeMatches(encodeMatches(list)) deep-equals the list', async (t) => {
  fc.assert(fc.property(listArb, (list) => void t.same(decodeMatches(encodeMatches(list)), list)), { numRuns: 300 })
})

t.test('holes and matches tile the target exactly, in order', async (t) => {
  fc.assert(
    fc.property(listArb, (list) => {
      const pieces = [...list.matches.map((m) => [m.target, m.length] as const), ...holesOf(list).map((h) => [h.target, h.length] as const)]
        .filter(([, n]) => n > 0)
        .sort((a, b) => a[0] - b[0])
      let at = 0
      for (const [start, n] of pieces) {
        t.equal(start, at)
        at += n
      }
      t.equal(at, list.targetSize)
    }),
    { numRuns: 200 },
  )
})

t.test("a hole's seed range is the gap between the seed ends of the matches around it", async (t) => {
  const list: MatchList = {
    seedSize: 1000,
    targetSize: 1000,
    matches: [{ target: 0, seed: 0, length: 100 }, { target: 150, seed: 140, length: 300 }, { target: 500, seed: 100, length: 10 }],
  }
  t.same(holesOf(list), [
    { target: 100, length: 50, seed: 100, seedLength: 40 }, // an edit: 40 seed bytes became 50
    { target: 450, length: 50, seed: 440, seedLength: 0 }, // a move back in the seed: no range
    { target: 510, length: 490, seed: 110, seedLength: 890 }, // to the ends of both
  ])
})

t.test('hostile match lists are BAD_DATA, never a throw of another kind or a huge allocation', async (t) => {
  const good = encodeMatches({ seedSize: 100, targetSize: 100, matches: [{ target: 10, seed: 20, length: 30 }] })
  const bad = (bytes: Uint8Array, why: string): void => void t.throws(() => decodeMatches(bytes), { code: 'BAD_DATA' }, why)
  bad(good.subarray(0, good.length - 1), 'truncated')
  bad(new Uint8Array([...good, 0]), 'trailing byte')
  bad(new Uint8Array([0x64, 0x73, 0x44, 1]), 'a delta, not a match list')
  bad(new Uint8Array([0x64, 0x73, 0x4d, 2, 0, 0, 0]), 'another version')
  bad(encodeMatches({ seedSize: 100, targetSize: 100, matches: [{ target: 10, seed: 90, length: 30 }] }), 'past the seed')
  bad(encodeMatches({ seedSize: 100, targetSize: 30, matches: [{ target: 10, seed: 0, length: 30 }] }), 'past the target')
  bad(new Uint8Array([0x64, 0x73, 0x4d, 1, 100, 100, 0xff, 0xff, 0xff, 0x7f]), 'a count far beyond the bytes present')
  const many = { seedSize: 1 << 30, targetSize: 1 << 30, matches: Array.from({ length: MAX_MATCHES + 1 }, (_, i) => ({ target: 2 * i, seed: 2 * i, length: 1 })) }
  bad(encodeMatches(many), 'more than MAX_MATCHES')
  for (let s = 0; s < 300; s++) {
    const junk = new Uint8Array([0x64, 0x73, 0x4d, 1, ...randomBytes(s + 1, 40)])
    try {
      const list = decodeMatches(junk)
      for (const m of list.matches) t.ok(m.seed >= 0 && m.seed + m.length <= list.seedSize && m.target + m.length <= list.targetSize)
    } catch (err) {
      t.equal((err as { code?: string }).code, 'BAD_DATA')
    }
  }
})
