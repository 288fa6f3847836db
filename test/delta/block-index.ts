/**
 * The sender's block lookup (src/delta/block-index.ts): for any signature, `find` visits the
 * blocks of a weak key in seed order, at most `max` of them, and the prefilter never hides a
 * key that is there.
 */
import t from 'tap'
import fc from 'fast-check'
import { BlockIndex } from '../../src/delta/block-index.js'
import type { Signature } from '../../src/delta/signature.js'

function signature(weak: readonly number[], weakBits: number, blockSize = 64): Signature {
  return { blockSize, seedSize: weak.length * blockSize, weakBits, weak: Uint32Array.from(weak), strongBits: 16, strong: new Uint32Array(weak.length) } as unknown as Signature
}

/** What find must return: the blocks with key `w`, in seed order. */
const blocksOf = (weak: readonly number[], w: number): number[] => weak.flatMap((k, i) => (k === w ? [i] : []))

t.test('find visits exactly the blocks of a key, in seed order, up to max (property)', async () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 32 }).chain((bits) =>
        fc.tuple(fc.constant(bits), fc.array(fc.integer({ min: 0, max: 2 ** bits - 1 }), { maxLength: 400 }), fc.integer({ min: 1, max: 8 })),
      ),
      ([bits, weak, max]) => {
        const index = new BlockIndex(signature(weak, bits))
        // Keys present (with repeats), and a few absent ones either side of them.
        const probes = [...new Set([...weak, 0, 2 ** bits - 1, ...weak.map((w) => (w + 1) % 2 ** bits)])]
        for (const w of probes) {
          const want = blocksOf(weak, w).slice(0, max)
          const seen: number[] = []
          const got = index.find(w, max, (b) => (seen.push(b), false))
          if (got !== -1 || JSON.stringify(seen) !== JSON.stringify(want)) return false
          if (want.length > 0 && !index.mayHave(w)) return false
          // The visit that accepts ends the search with that block.
          if (want.length > 0 && index.find(w, max, (b) => b === want.at(-1)) !== want.at(-1)) return false
        }
        return true
      },
    ),
    { numRuns: 300 },
  )
})

t.test('a last block shorter than the block size is not indexed', async (t) => {
  const sig = { ...signature([7, 7, 7], 8), seedSize: 2 * 64 + 10 } as Signature
  const seen: number[] = []
  new BlockIndex(sig).find(7, 10, (b) => (seen.push(b), false))
  t.same(seen, [0, 1])
})
