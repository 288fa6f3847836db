import t from 'tap'
import fc from 'fast-check'
import { LIMITS } from '../../src/net/index.js'
import { dataFrames } from '../../src/sync/data-frames.js'
import { randomBytes } from '../support/random.js'

const MiB = 1024 * 1024

const POOL = randomBytes(1, 40 * MiB)

/** `sizes` as consecutive pieces of one random buffer, and what dataFrames makes of them. */
async function frames(sizes: readonly number[]): Promise<{ pieces: Uint8Array[]; out: Uint8Array[] }> {
  let at = 0
  const pieces = sizes.map((s) => POOL.subarray(at, (at += s)))
  const out: Uint8Array[] = []
  for await (const f of dataFrames((async function* () { yield* pieces })())) out.push(f)
  return { pieces, out }
}

t.test('data frames: the bytes in order, every payload within the limit and not empty', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 60_000, max: 3 * MiB })), { maxLength: 12 }), async (sizes) => {
      const { pieces, out } = await frames(sizes)
      if (!Buffer.concat(out).equals(Buffer.concat(pieces))) return false
      return out.every((f) => f.length > 0 && f.length <= LIMITS.maxDataBytes)
    }),
    { numRuns: 60, seed: 5 },
  )
  t.pass('held for 60 random streams')
})

t.test('data frames: a whole file of up to 1 MiB goes as two messages at most, a small one as one; large bodies after the first pass uncopied', async (t) => {
  t.equal((await frames([10, 8, 500 * 1024, 4, 40])).out.length, 1, '500 KiB: one message')
  t.equal((await frames([10, 8, MiB, 4, 40])).out.length, 2, '1 MiB: header and body share the first message')
  t.equal((await frames([10, 8, 300, 4, 40])).out.length, 1, 'small: one')
  const { pieces, out } = await frames([10, 8, MiB, 4, 8, MiB, 4, 8, MiB, 4, 40])
  t.equal(out.length, 6, '3 MiB: 6 messages (7 before the first body shared one)')
  t.equal(out[2]!.byteOffset, pieces[5]!.byteOffset, 'the second body is sent as it is, not copied')
  t.equal(out[2]!.buffer, POOL.buffer)
  t.equal(out[4]!.byteOffset, pieces[8]!.byteOffset, 'the third body too')
})
