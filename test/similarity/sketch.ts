import t from 'tap'
import fc from 'fast-check'
import { GEAR } from '../../src/chunk/index.js'
import { atLevel, LONG_WINDOW, MAX_ANCHORS, MIN_ANCHORS, NO_AHEAD, SketchBuilder, sketchBytes, sketchStream } from '../../src/similarity/index.js'
import { randomBytes, splitStream } from '../support/random.js'

t.test('the same sketch for any split of the input', async (t) => {
  const data = randomBytes(11, 300_000)
  const whole = sketchBytes(data)
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 8 }), async (sizes) => {
      const split = await sketchStream(splitStream(data, sizes))
      t.same(split, whole)
    }),
    { numRuns: 20 },
  )
})

t.test('size bounds: MIN_ANCHORS..2·MIN_ANCHORS for small files, proportional for big ones', async (t) => {
  for (const n of [4096, 65536, 131072]) {
    const s = sketchBytes(randomBytes(n, n))
    t.ok(s.short.length >= MIN_ANCHORS / 2 && s.short.length <= 2 * MIN_ANCHORS, `${n} bytes: ${s.short.length} anchors at level ${s.level}`)
    t.equal(s.size, n)
  }
  const mid = sketchBytes(randomBytes(9, 1 << 20))
  t.ok(mid.short.length >= 1500 && mid.short.length <= 4096, `1 MiB: ${mid.short.length} anchors`)
  const big = sketchBytes(randomBytes(5, 8 << 20))
  t.ok(big.short.length > 12000 && big.short.length < 2 * 16384, `8 MiB: ${big.short.length} anchors`)
  t.ok(big.short.length <= MAX_ANCHORS)
})

t.test('anchors sit at content-chosen positions: an insertion moves none of the others', async (t) => {
  const a = randomBytes(21, 100_000)
  const b = new Uint8Array([...randomBytes(22, 777), ...a])
  const sa = sketchBytes(a)
  const sb = atLevel(sketchBytes(b), sa.level)
  t.same(sb.short.slice(sb.short.length - sa.short.length), atLevel(sa, sb.level).short.slice(0))
})

t.test('a long run of one byte is one anchor counting for every position it covers', async (t) => {
  const s = sketchBytes(new Uint8Array(1 << 20))
  t.ok(s.short.length <= 1, `${s.short.length} anchors`)
  const b = new SketchBuilder()
  b.update(new Uint8Array(10))
  t.same(b.finish().tiny, new Uint8Array(10), 'a file under 64 bytes is kept whole')
})

t.test('atLevel keeps exactly the anchors with enough leading zero bits', async (t) => {
  const s = sketchBytes(randomBytes(7, 50_000))
  const c = atLevel(s, s.level + 2)
  t.ok(c.short.every((h) => Math.clz32(h) >= s.level + 2))
  t.equal(c.short.length, s.short.filter((h) => Math.clz32(h) >= s.level + 2).length)
  t.equal(atLevel(s, s.level), s)
})

/** The windows' hash as format 2 defines it (FNV-1a, folded to 24 bits), by the definition. */
function fnv24(bytes: Uint8Array): number {
  let x = 0x811c9dc5
  for (const b of bytes) x = Math.imul(x ^ b, 0x01000193)
  return (x ^ (x >>> 16)) & 0xffffff
}

t.test('each anchor carries h(p − 32) and its windows (32 and 64 bytes ending at p, 64 centred; none in the last 32 bytes), as a plain pass finds them', async (t) => {
  for (const [seed, n] of [[41, 5000], [42, 200_000], [43, 70]] as const) {
    const data = randomBytes(seed, n)
    const s = sketchBytes(data)
    // Gear's h at every position, by the definition.
    const h = new Uint32Array(n)
    let v = 0
    for (let p = 0; p < n; p++) h[p] = v = ((v << 1) + GEAR[data[p]!]!) >>> 0
    const want = { short: [] as number[], prior: [] as number[], w32: [] as number[], w64: [] as number[], centred: [] as number[] }
    for (let p = LONG_WINDOW - 1; p < n; p++) {
      if (Math.clz32(h[p]!) < s.level) continue
      want.short.push(h[p]!)
      want.prior.push(h[p - 32]! & 0xffffff)
      want.w32.push(fnv24(data.subarray(p - 31, p + 1)))
      want.w64.push(fnv24(data.subarray(p - 63, p + 1)))
      want.centred.push(p + 32 < n ? fnv24(data.subarray(p - 31, p + 33)) : NO_AHEAD)
    }
    t.same([...s.short], want.short, `${n} bytes: the anchors`)
    t.same([...s.prior], want.prior, `${n} bytes: h(p − 32)`)
    t.same([...s.windows!.w32], want.w32, `${n} bytes: the 32 bytes ending at p`)
    t.same([...s.windows!.w64], want.w64, `${n} bytes: the 64 bytes ending at p`)
    t.same([...s.windows!.centred], want.centred, `${n} bytes: the 64 bytes centred on p`)
    if (n < 100) t.ok(want.centred.includes(NO_AHEAD), 'a small file samples every position: its last 32 have no centred window')
  }
})
