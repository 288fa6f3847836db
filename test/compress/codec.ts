import t from 'tap'
import fc from 'fast-check'
import { CODEC, compressFrame, decompressFrame, hasZstd, zstdBackendName } from '../../src/compress/index.js'
import { randomBytes } from '../support/random.js'

const text = new TextEncoder().encode('export function main(argv: string[]): number {\n  return 0\n}\n'.repeat(2000))

t.test('zstd is loaded here (it is a dependency) and compresses text', async (t) => {
  t.ok(hasZstd())
  t.ok(zstdBackendName() !== null)
  const f = compressFrame(text)
  t.equal(f.codec, CODEC.ZSTD)
  t.ok(f.data.length < text.length / 20, `${f.data.length} of ${text.length}`)
  t.ok(Buffer.from(decompressFrame(f.codec, f.data, text.length)).equals(text))
})

t.test('incompressible bytes are stored as they are', async (t) => {
  const raw = randomBytes(1, 100000)
  const f = compressFrame(raw)
  t.equal(f.codec, CODEC.STORED)
  t.equal(f.data.length, raw.length)
})

t.test('the deflate fallback round-trips (a writer without zstd)', async (t) => {
  const f = compressFrame(text, { codec: CODEC.DEFLATE })
  t.equal(f.codec, CODEC.DEFLATE)
  t.ok(Buffer.from(decompressFrame(f.codec, f.data, text.length)).equals(text))
})

t.test('round trip of any bytes with any codec', async () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 5000 }), fc.constantFrom(CODEC.STORED, CODEC.ZSTD, CODEC.DEFLATE), (raw, codec) => {
      const f = compressFrame(raw, { codec })
      return Buffer.from(decompressFrame(f.codec, f.data, raw.length)).equals(Buffer.from(raw))
    }),
  )
})

t.test('a frame that decodes to another size than declared, or garbage, is BAD_DATA', async (t) => {
  for (const codec of [CODEC.ZSTD, CODEC.DEFLATE]) {
    const f = compressFrame(text, { codec })
    t.throws(() => decompressFrame(f.codec, f.data, text.length - 1), { code: 'BAD_DATA' }, `${codec}: shorter`)
    t.throws(() => decompressFrame(f.codec, f.data, text.length + 1), { code: 'BAD_DATA' }, `${codec}: longer`)
    t.throws(() => decompressFrame(f.codec, randomBytes(2, 100), 1000), { code: 'BAD_DATA' }, `${codec}: garbage`)
  }
  t.throws(() => decompressFrame(CODEC.STORED, new Uint8Array(5), 6), { code: 'BAD_DATA' })
  const bomb = new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x58, 0, 0, 0, 0, 0, 1, 0, 0])
  t.throws(() => decompressFrame(CODEC.ZSTD, bomb, 100), { code: 'BAD_DATA', message: /header says 1099511627776 bytes/ }, 'a frame that claims 1 TiB is refused before decoding')
  t.throws(() => decompressFrame(7, new Uint8Array(5), 5), { code: 'BAD_DATA', message: /unknown codec/ })
})
