import fc from 'fast-check'
import t from 'tap'
import { decodeRecord, encodeRecord } from '../../src/store/record-codec.js'
import { randomBytes } from '../support/random.js'
import { recordOf } from '../support/records.js'

t.test('decode(encode(record)) deep-equals the record, id and racy flag', async (t) => {
  fc.assert(
    fc.property(fc.nat(20_000), fc.nat(0xffffffff), fc.boolean(), fc.double({ min: 0, max: 4e12, noNaN: true }), (n, id, racy, mtimeMs) => {
      const rec = recordOf('p/q', randomBytes(n + 1, n), undefined, { mtimeMs, mode: n & 0o7777 })
      const back = decodeRecord('p/q', encodeRecord(rec, id, racy))
      t.same(back, { record: rec, id, racy })
      return true
    }),
    { numRuns: 40 },
  )
})

t.test('20 bytes per chunk plus a 64-byte header', async (t) => {
  const rec = recordOf('x', randomBytes(1, 50_000))
  t.equal(encodeRecord(rec, 1, false).length, 64 + 20 * rec.chunks.length)
})

t.test('foreign or truncated bytes are BAD_DATA naming the path', async (t) => {
  const buf = encodeRecord(recordOf('x', randomBytes(2, 3000)), 7, false)
  t.throws(() => decodeRecord('a/b', buf.subarray(0, buf.length - 1)), { code: 'BAD_DATA', message: /a\/b.*truncated/ })
  t.throws(() => decodeRecord('a/b', new Uint8Array(10)), { code: 'BAD_DATA', message: /unknown format/ })
})
