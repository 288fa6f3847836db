import t from 'tap'
import fc from 'fast-check'
import { atLevel, decodeSketch, encodeSketch, encodeSketchWithin, sketchBytes } from '../../src/similarity/index.js'
import { isDsyncError } from '../../src/errors.js'
import { randomBytes } from '../support/random.js'

t.test('decode(encode(s)) equals s: 17 bytes an anchor in format 2; format 1 (older peers, the index) drops the windows in 8', async (t) => {
  for (const n of [0, 10, 63, 64, 5000, 1 << 20]) {
    const s = sketchBytes(randomBytes(n + 1, n), { windows: true })
    const bytes = encodeSketch(s)
    t.same(decodeSketch(bytes), s, `${n} bytes`)
    t.ok(bytes.length <= 16 + s.tiny.length + 17 * s.short.length + 8, `${bytes.length} bytes for ${s.short.length} anchors`)
    const old = encodeSketch(s, 1)
    const { windows, ...rest } = s
    t.ok(windows === undefined || windows.w64.length === s.short.length)
    t.same(decodeSketch(old), rest, `${n} bytes, format 1`)
    t.equal(old[0], 1, 'format 1 is what dsync before protocol 5 reads')
    t.ok(old.length <= 16 + s.tiny.length + 8 * s.short.length + 8)
  }
})

t.test('random or cut bytes give BAD_DATA, never anything else', async (t) => {
  const good = encodeSketch(sketchBytes(randomBytes(3, 9000)))
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(good.length - 1), (junk, cut) => {
      for (const buf of [junk, good.subarray(0, cut)]) {
        try {
          decodeSketch(buf)
        } catch (err) {
          if (!isDsyncError(err, 'BAD_DATA')) throw err
        }
      }
    }),
    { numRuns: 300 },
  )
  t.pass()
})

t.test('encodeSketchWithin cuts a sketch to coarser levels until it fits', async (t) => {
  const s = sketchBytes(randomBytes(9, 1 << 20), { windows: true })
  const full = encodeSketch(s)
  const cut = encodeSketchWithin(s, 2, 10_000)
  t.ok(full.length > 30_000 && cut.length <= 10_000, `${full.length} → ${cut.length} bytes`)
  const back = decodeSketch(cut)
  t.ok(back.level > s.level)
  t.same(back, atLevel(s, back.level), 'the anchors of a coarser level, windows and all')
  t.same(encodeSketchWithin(s, 2, full.length), full, 'one that fits goes as it is')
})
