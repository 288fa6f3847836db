import t from 'tap'
import fc from 'fast-check'
import { blockSizeFor, computeSignature, keyBits, MATCH_MARGIN_BITS, MAX_BLOCK, MIN_BLOCK } from '../../src/delta/index.js'
import { randomBytes, splitStream } from '../support/random.js'

t.test('the signature is the same whatever the read buffer split', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 20000 }), fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 3 }), async (n, split) => {
      const seed = randomBytes(n + 1, n)
      const a = await computeSignature(splitStream(seed, [n || 1]), { blockSize: 300 })
      const b = await computeSignature(splitStream(seed, split), { blockSize: 300 })
      t.same(b, a)
      t.equal(a.weak.length, Math.ceil(n / 300))
      t.equal(a.seedSize, n)
    }),
    { numRuns: 40 },
  )
})

t.test('blocks are about √size, within bounds, multiples of 64', async (t) => {
  t.equal(blockSizeFor(0), MIN_BLOCK)
  t.equal(blockSizeFor(20e6), 4480)
  t.equal(blockSizeFor(2 ** 31), 46336)
  t.equal(blockSizeFor(2 ** 50), MAX_BLOCK)
  for (const size of [1e3, 1e5, 1e7, 1e9]) t.equal(blockSizeFor(size) % 64, 0)
})

t.test('key widths: enough bits for the false-match budget, never past 32 each', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 45 }), (size) => {
      const count = Math.ceil(size / blockSizeFor(size))
      const { weakBits, strongBits } = keyBits(size, count)
      const total = weakBits + strongBits
      const lc = Math.log2(Math.max(2, count))
      t.ok(weakBits >= 16 && weakBits <= 32 && strongBits >= 12 && strongBits <= 32)
      // continuing a run: one comparison per block; a search hit: two blocks against ≤ 2^32 offsets
      t.ok(total >= Math.min(64, lc + MATCH_MARGIN_BITS) && 2 * total >= 32 + lc + MATCH_MARGIN_BITS, `${size}: ${weakBits}+${strongBits}`)
    }),
  )
  // 20 MB: 35 bits = 4.4 bytes per block (rsync 3.2 spends 32 + 16 = 48).
  t.same(keyBits(20e6, Math.ceil(20e6 / 4480)), { weakBits: 23, strongBits: 12 })
})

t.test('a wrong size hint costs bytes, not correctness: the size read is recorded', async (t) => {
  const seed = randomBytes(5, 10000)
  const sig = await computeSignature(splitStream(seed, [777]), { size: 1e9 })
  t.equal(sig.seedSize, 10000)
  t.equal(sig.blockSize, blockSizeFor(1e9))
})

t.test('bad block size is a USAGE error; an aborted signal is ABORTED', async (t) => {
  await t.rejects(computeSignature(splitStream(new Uint8Array(10), [10]), { blockSize: 0 }), { code: 'USAGE' })
  await t.rejects(computeSignature(splitStream(new Uint8Array(10), [10]), { blockSize: MAX_BLOCK + 1 }), { code: 'USAGE' })
  const ac = new AbortController()
  ac.abort()
  await t.rejects(computeSignature(splitStream(new Uint8Array(10), [10]), { signal: ac.signal }), { code: 'ABORTED' })
})
