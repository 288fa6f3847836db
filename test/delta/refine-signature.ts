import t from 'tap'
import {
  computeRefineSignature,
  DIRECT_REFINE_SPAN,
  decodeRefineSignature,
  encodeRefineSignature,
  holesOf,
  MAX_REFINE_BLOCKS,
  planRefinement,
  type MatchList,
} from '../../src/delta/index.js'
import { randomBytes } from '../support/random.js'
import { memorySeed } from './support/roundtrip.js'

const seed = randomBytes(1, 200_000)
/** An edit at 50,000 (a 4 KiB block lost, 10 bytes inserted) and one at 150,000 (replaced). */
const list: MatchList = {
  seedSize: seed.length,
  targetSize: seed.length + 10,
  matches: [
    { target: 0, seed: 0, length: 49_152 },
    { target: 53_258, seed: 53_248, length: 94_208 },
    { target: 151_562, seed: 151_552, length: 48_448 },
  ],
}

t.test('planRefinement picks the holes inside runs of copies, with blocks ≈ √(3.75 · range), at most half the last round\'s', async (t) => {
  const plan = planRefinement(list, 4096)
  t.ok(plan)
  t.same(plan!.holes, [0, 1])
  t.ok(plan!.blockSize >= 96 && plan!.blockSize <= 128, `block ${plan!.blockSize}`)
  t.equal(planRefinement(list, 16), null, 'no round below 16-byte blocks')
  t.equal(planRefinement({ ...list, matches: [list.matches[0]!] }, 4096), null, 'an append (no seed range of its size) is not refined')
})

t.test('a hole of several of the last round\'s blocks is refined only with a wider span (after a direct round 1)', async (t) => {
  const wide: MatchList = {
    seedSize: 400_000,
    targetSize: 400_000,
    // One hole of 10 blocks of 18 KiB between two runs of copies.
    matches: [{ target: 0, seed: 0, length: 100_000 }, { target: 284_320, seed: 284_320, length: 115_680 }],
  }
  t.equal(planRefinement(wide, 18_432), null, 'span 4 (default): a 10-block hole is a rewrite')
  const plan = planRefinement(wide, 18_432, DIRECT_REFINE_SPAN)
  t.same(plan?.holes, [0], `span ${DIRECT_REFINE_SPAN}: refined`)
})

t.test('decode(encode(sig), list) deep-equals sig; the keys are those of the seed ranges', async (t) => {
  const plan = planRefinement(list, 4096)!
  const sig = await computeRefineSignature(memorySeed(seed), list, plan)
  const holes = holesOf(list)
  t.equal(sig.weak.length, plan.holes.reduce((n, i) => n + Math.ceil(holes[i]!.seedLength / plan.blockSize), 0))
  t.same(decodeRefineSignature(encodeRefineSignature(sig), list), sig)
})

t.test('hostile refinement signatures are BAD_DATA', async (t) => {
  const sig = await computeRefineSignature(memorySeed(seed), list, planRefinement(list, 4096)!)
  const good = encodeRefineSignature(sig)
  const bad = (bytes: Uint8Array, why: string, l = list): void => void t.throws(() => decodeRefineSignature(bytes, l), { code: 'BAD_DATA' }, why)
  bad(good.subarray(0, good.length - 1), 'truncated')
  bad(new Uint8Array([...good, 0]), 'trailing byte')
  bad(encodeRefineSignature({ ...sig, holes: [0, 2] }), 'a hole with no seed range')
  bad(encodeRefineSignature({ ...sig, holes: [0, 7] }), 'a hole the list does not have')
  bad(encodeRefineSignature({ ...sig, blockSize: 8 }), 'blocks too small')
  bad(good, 'keys for another list', { ...list, matches: [list.matches[0]!] })
  const huge: MatchList = { seedSize: 1 << 30, targetSize: 1 << 30, matches: [{ target: 0, seed: 0, length: 1 }, { target: (1 << 30) - 1, seed: (1 << 30) - 1, length: 1 }] }
  bad(encodeRefineSignature({ blockSize: 16, weakBits: 1, strongBits: 1, holes: [0], weak: new Uint32Array(0), strong: new Uint32Array(0) }), 'a range of 64 Mi blocks', huge)
  for (let s = 0; s < 200; s++) {
    try {
      decodeRefineSignature(new Uint8Array([0x64, 0x73, 0x52, 1, ...randomBytes(s + 9, 30)]), list)
    } catch (err) {
      t.equal((err as { code?: string }).code, 'BAD_DATA')
    }
  }
})

t.test('a plan never holds more than MAX_REFINE_BLOCKS blocks: blocks grow instead', async (t) => {
  const n = 3000
  const matches = Array.from({ length: n }, (_, i) => ({ target: i * 2_000_000, seed: i * 2_000_000, length: 1_000_000 }))
  const big: MatchList = { seedSize: n * 2_000_000, targetSize: n * 2_000_000, matches }
  const plan = planRefinement(big, 1 << 20)
  t.ok(plan)
  const blocks = plan!.holes.length * Math.ceil(1_000_000 / plan!.blockSize)
  t.ok(blocks <= MAX_REFINE_BLOCKS, `${blocks} blocks of ${plan!.blockSize}`)
})

t.test('an empty match list of a seed over 4 MiB is never refined (the sender\'s answer to a list too long to send)', async (t) => {
  for (const prev of [256, 40_000, 1 << 20]) t.equal(planRefinement({ seedSize: 128 << 20, targetSize: 128 << 20, matches: [] }, prev), null)
})
