import t from 'tap'
import { frameContentSize, loadZstdBackends } from '../../src/compress/index.js'

// The size check that runs before any zstd backend allocates (RFC 8878 §3.1.1.1 field sizes).
t.test('reads the content size in each field width, or says it is absent', async (t) => {
  const hdr = (descriptor: number, ...rest: number[]) => new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, descriptor, ...rest])
  t.equal(frameContentSize(hdr(0x20, 200)), 200, 'single segment, 1 byte')
  t.equal(frameContentSize(hdr(0x60, 0xb8, 0x0a)), 3000, '2 bytes, stored less 256')
  t.equal(frameContentSize(hdr(0xa0, 0x00, 0x00, 0x10, 0x00)), 1 << 20, '4 bytes')
  t.equal(frameContentSize(hdr(0xc0, 0x58, 1, 0, 0, 0, 0, 0, 0, 0)), 1, '8 bytes after a window byte')
  t.equal(frameContentSize(hdr(0x00, 0x58)), 'unknown', 'no size field')
  t.equal(frameContentSize(hdr(0x23, 1, 2, 3, 4, 9)), 9, 'after a 4-byte dictionary id')
})

t.test('garbage, truncation and reserved bits are bad', async (t) => {
  t.equal(frameContentSize(new Uint8Array([1, 2, 3, 4, 5, 6])), 'bad')
  t.equal(frameContentSize(new Uint8Array([0x28, 0xb5, 0x2f, 0xfd])), 'bad')
  t.equal(frameContentSize(new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0])), 'bad', 'size field cut short')
  t.equal(frameContentSize(new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x28, 0])), 'bad', 'reserved bit set')
})

t.test('every backend writes the content size our reader finds', async (t) => {
  for (const b of await loadZstdBackends()) {
    for (const n of [0, 1, 255, 256, 70_000, 1 << 20]) t.equal(frameContentSize(b.compress(new Uint8Array(n), 3)), n, `${b.name}: ${n}`)
  }
})
