import t from 'tap'
import fc from 'fast-check'
import { BYTE_MAP, ROLL_BASE, fmix32, rollHash, rollingHash, outFactor, outTable, outTableFor, weakKey } from '../../src/delta/rolling-hash.js'

t.test('rolling one byte (rollHash, or the outTable form the sender uses) equals hashing the new window from scratch', async () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 2, maxLength: 400 }), fc.integer({ min: 1, max: 64 }), (data, n0) => {
      const n = Math.min(n0, data.length - 1)
      const outF = outFactor(n)
      const outG = outTable(outF)
      let h = rollingHash(data, 0, n)
      for (let i = 0; i + n < data.length; i++) {
        const viaTable = (Math.imul((h - outG[data[i]!]!) | 0, ROLL_BASE) + BYTE_MAP[data[i + n]!]!) | 0
        h = rollHash(h, outF, data[i]!, data[i + n]!)
        if (h !== rollingHash(data, i + 1, n) || viaTable !== h) return false
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
  // Signature version 3: the key is the raw hash's top bits; version 2's key was fmix32 of the
  // same hash, 521837517, so the rolling hash itself has not changed.
  t.equal(weakKey(rollingHash(data, 0, data.length), 32), 791758347)
  t.equal(fmix32(791758347), 521837517)
  t.equal(weakKey(rollingHash(data, 0, data.length), 12), 791758347 >>> 20, 'fewer bits are the top bits')
  t.equal(BYTE_MAP[0], fmix32(0x9e3779b1) | 0)
})

t.test('outTableFor(n) is outTable(outFactor(n)), made once per block size', async (t) => {
  for (const n of [1, 16, 64, 700, 4096, 65536]) {
    t.same(Array.from(outTableFor(n)), Array.from(outTable(outFactor(n))), `block size ${n}`)
    t.equal(outTableFor(n), outTableFor(n), `block size ${n}: the same table again`)
  }
  const wrong: number[] = []
  for (let n = 1; n <= 200; n++) if (outTableFor(n).some((v, x) => v !== Math.imul(BYTE_MAP[x]!, outFactor(n)))) wrong.push(n)
  t.same(wrong, [], 'still right for 200 sizes, past the kept tables')
})
