import t from 'tap'
import fc from 'fast-check'
import { BYTE_MAP, fmix32, rollHash, rollingHash, outFactor, weakKey } from '../../src/delta/rolling-hash.js'

t.test('rolling one byte equals hashing the new window from scratch', async () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 2, maxLength: 400 }), fc.integer({ min: 1, max: 64 }), (data, n0) => {
      const n = Math.min(n0, data.length - 1)
      const outF = outFactor(n)
      let h = rollingHash(data, 0, n)
      for (let i = 0; i + n < data.length; i++) {
        h = rollHash(h, outF, data[i]!, data[i + n]!)
        if (h !== rollingHash(data, i + 1, n)) return false
      }
      return true
    }),
  )
})

t.test('weak keys of windows that differ in one byte differ (the map is a bijection per byte)', async (t) => {
  const a = new Uint8Array(1024).fill(65)
  const seen = new Set<number>()
  for (let i = 0; i < 1024; i += 37) {
    const b = a.slice()
    b[i] = 66
    seen.add(weakKey(rollingHash(b, 0, b.length), 32))
  }
  t.equal(seen.size, Math.ceil(1024 / 37))
})

t.test('golden values: the hash is part of the signature format and must not drift', async (t) => {
  const data = new TextEncoder().encode('dsync rolling hash golden vector')
  t.equal(weakKey(rollingHash(data, 0, data.length), 32), 521837517)
  t.equal(weakKey(rollingHash(data, 0, data.length), 12), 521837517 >>> 20, 'fewer bits are the top bits')
  t.equal(BYTE_MAP[0], fmix32(0x9e3779b1) | 0)
})
