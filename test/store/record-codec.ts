import fc from 'fast-check'
import t from 'tap'
import { decodeRecord, encodeRecord } from '../../src/store/record-codec.js'
import { sampleChunks } from '../../src/store/sampling.js'
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

t.test('a sampled record keeps each chunk offset: decode(encode) gives it back, flag included', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 400_000 }), fc.nat(0xffffffff), (n, id) => {
      const full = recordOf('big', randomBytes(n, n))
      const rec = { ...full, chunks: sampleChunks(full.chunks), sampled: true }
      const buf = encodeRecord(rec, id, false)
      t.equal(buf.length, 64 + 28 * rec.chunks.length, '28 bytes a sampled chunk')
      t.same(decodeRecord('big', buf), { record: rec, id, racy: false })
      return true
    }),
    { numRuns: 25 },
  )
  const full = recordOf('big', randomBytes(9, 300_000))
  const rec = decodeRecord('big', encodeRecord({ ...full, chunks: sampleChunks(full.chunks), sampled: true }, 1, false)).record
  t.ok(rec.chunks.some((c, i) => i > 0 && c.offset !== rec.chunks[i - 1]!.offset + rec.chunks[i - 1]!.length), 'the sample has gaps, kept')
  t.same(sampleChunks(rec.chunks), rec.chunks, 'sampling the sample gives it back')
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
