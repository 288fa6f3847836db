import t from 'tap'
import fc from 'fast-check'
import { computeSignature, decodeSignature, EMPTY_SIGNATURE, encodeSignature } from '../../src/delta/index.js'
import { DsyncError } from '../../src/errors.js'
import { randomBytes, splitStream } from '../support/random.js'

t.test('decode(encode(sig)) equals sig, for any size, block size and key widths', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 30000 }), fc.integer({ min: 1, max: 4000 }), async (n, blockSize) => {
      const sig = await computeSignature(splitStream(randomBytes(n + 7, n), [4096]), { blockSize })
      t.same(decodeSignature(encodeSignature(sig)), sig)
    }),
    { numRuns: 60 },
  )
  t.same(decodeSignature(encodeSignature(EMPTY_SIGNATURE)), EMPTY_SIGNATURE)
})

t.test('size: header + (weak+strong) bits per block + 4-byte check', async (t) => {
  const sig = await computeSignature(splitStream(randomBytes(3, 1 << 20), [65536]), { size: 1 << 20 })
  const bits = sig.weakBits + sig.strongBits
  const header = 4 + 3 + 2 + 2 // magic+version, varint size (3), varint block (2), 2 widths
  t.equal(encodeSignature(sig).length, header + Math.ceil((sig.weak.length * bits) / 8) + 4)
})

t.test('any flipped bit, cut or extension is BAD_DATA', async () => {
  const bytes = encodeSignature(await computeSignature(splitStream(randomBytes(4, 50000), [4096]), { blockSize: 512 }))
  fc.assert(
    fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 0, max: 7 }), fc.integer({ min: -bytes.length, max: 40 }), (at, bit, cut) => {
      const flipped = bytes.slice()
      flipped[at]! ^= 1 << bit
      const resized = cut < 0 ? bytes.slice(0, bytes.length + cut) : new Uint8Array([...bytes, ...new Uint8Array(cut + 1)])
      for (const bad of [flipped, resized]) {
        try {
          decodeSignature(bad)
          return false
        } catch (err) {
          if (!(err instanceof DsyncError && err.code === 'BAD_DATA')) return false
        }
      }
      return true
    }),
    { numRuns: 300 },
  )
})

t.test('another version or a non-signature file says so', async (t) => {
  const bytes = encodeSignature(EMPTY_SIGNATURE)
  const v9 = bytes.slice()
  v9[3] = 9
  t.throws(() => decodeSignature(v9), { code: 'BAD_DATA', message: /version 9 is not supported/ })
  t.throws(() => decodeSignature(new TextEncoder().encode('#!/bin/sh\necho hi\n')), { code: 'BAD_DATA', message: /not a dsync signature/ })
})
