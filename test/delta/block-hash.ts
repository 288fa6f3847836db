import t from 'tap'
import fc from 'fast-check'
import { BLOCK_HASH_SEED, blockHash, murmur3 } from '../../src/delta/block-hash.js'
import { randomBytes } from '../support/random.js'

const text = (s: string): Uint8Array => new TextEncoder().encode(s)

t.test('golden values: MurmurHash3 x86_32 as the reference implementation computes it', async (t) => {
  // Published vectors of MurmurHash3_x86_32 (smhasher): the strong key is that function, exactly.
  t.equal(murmur3(text(''), 0, 0, 0), 0)
  t.equal(murmur3(text(''), 0, 0, 1), 0x514e28b7)
  t.equal(murmur3(text('test'), 0, 4, 0), 0xba6bd213)
  t.equal(murmur3(text('Hello, world!'), 0, 13, 1234), 0xfaf6cdb3)
  t.equal(murmur3(text('The quick brown fox jumps over the lazy dog'), 0, 43, 0), 0x2e4ff723)
  // The signature format's seed: pinned so it cannot drift.
  t.equal(BLOCK_HASH_SEED, 0x64734b32)
  t.equal(blockHash(text('dsync block hash golden vector'), 0, 30), murmur3(text('dsync block hash golden vector'), 0, 30, 0x64734b32))
})

t.test('the hash of a block is the same at any offset, in any buffer (aligned or not, up to its end)', async () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 7 }), (block, pre, post) => {
      const want = blockHash(block.slice(), 0, block.length)
      const host = new Uint8Array(pre + block.length + post)
      host.set(block, pre)
      // A view that starts at an odd byteOffset and ends at the buffer's end.
      const view = new Uint8Array(host.buffer, pre, block.length)
      return blockHash(host, pre, block.length) === want && blockHash(view, 0, block.length) === want
    }),
  )
})

t.test('top 12 bits spread evenly over near-identical blocks (counters, single-bit flips)', async (t) => {
  // 65,536 blocks of 64 bytes that differ in a counter or one bit: chi-square over 4096 buckets
  // (4095 degrees of freedom, sd ≈ 90.5) must stay within 5 sd of its mean.
  const counts = new Uint32Array(4096)
  const block = new Uint8Array(64)
  const dv = new DataView(block.buffer)
  for (let i = 0; i < 32768; i++) {
    dv.setUint32(8, i, true)
    counts[blockHash(block, 0, 64) >>> 20]!++
  }
  dv.setUint32(8, 0, true)
  for (let i = 0; i < 32768; i++) {
    const flipped = randomBytes(9, 64)
    flipped[i & 63]! ^= 1 << ((i >>> 6) & 7)
    flipped[(i >>> 9) & 63]! ^= 0x80
    counts[blockHash(flipped, 0, 64) >>> 20]!++
  }
  const expected = 65536 / 4096
  let chi = 0
  for (const c of counts) chi += (c - expected) ** 2 / expected
  t.ok(chi < 4095 + 5 * 90.5, `chi-square ${chi.toFixed(0)}`)
})
