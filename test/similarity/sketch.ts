import t from 'tap'
import fc from 'fast-check'
import { GEAR } from '../../src/chunk/index.js'
import { atLevel, LONG_WINDOW, MAX_ANCHORS, MIN_ANCHORS, NO_AHEAD, SketchBuilder, sketchBytes, sketchStream, windowIdentity } from '../../src/similarity/index.js'
import { gearKernel } from '../../src/similarity/sketch-wasm.js'
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

t.test('Node has the WebAssembly sketch kernel (so the case below tests it, not the fallback)', async (t) => {
  t.not(gearKernel(), undefined)
})

t.test('the kernel and the JS loop make the same sketch: random, text-like and repetitive bytes, any split', async () => {
  const bytes = fc.oneof(
    fc.integer({ min: 0, max: 400_000 }).map((n) => randomBytes(n + 1, n)),
    fc.integer({ min: 0, max: 200_000 }).map((n) => Uint8Array.from(randomBytes(n + 2, n), (b) => [32, 101, 116, 97, 10][b % 5]!)),
    fc.integer({ min: 0, max: 100_000 }).map((n) => new Uint8Array(n).fill(7)),
  )
  await fc.assert(
    fc.asyncProperty(bytes, fc.array(fc.integer({ min: 1, max: 90_000 }), { minLength: 1, maxLength: 5 }), async (data, sizes) => {
      const js = await sketchStream(splitStream(data, sizes), { kernel: 'js' })
      const wasm = await sketchStream(splitStream(data, sizes), { kernel: 'wasm' })
      return JSON.stringify({ ...js, short: [...js.short], prior: [...js.prior], count: [...js.count] }) ===
        JSON.stringify({ ...wasm, short: [...wasm.short], prior: [...wasm.prior], count: [...wasm.count] })
    }),
    { numRuns: 60 },
  )
})

t.test('the kernel\'s loop itself: the anchors, h and prior of a plain loop, across its 1 MiB windows, from any position', async (t) => {
  const kernel = gearKernel()!
  const data = randomBytes(21, (1 << 20) + 4096)
  const mask = (-1 << 28) | 0 // an anchor every ~16 bytes, some on a window's last byte
  const pos = 2 ** 32 - 5 // not a multiple of 32, past 2^32 on the way
  const ring = Int32Array.from({ length: 32 }, (_, i) => i * 7919)
  const want: number[][] = []
  const wantRing = ring.slice()
  let h = 12345
  for (let i = 0; i < data.length; i++) {
    h = ((h << 1) + GEAR[data[i]!]!) | 0
    const slot = (pos + i) % 32
    const prior = wantRing[slot]!
    wantRing[slot] = h
    if ((h & mask) === 0) want.push([i, h, prior])
  }
  const got: number[][] = []
  const gotRing = ring.slice()
  const end = kernel.feed(data, pos, 12345, gotRing, () => mask, (i, hh, prior) => got.push([i, hh, prior]))
  t.equal(end, h, 'h after the last byte')
  t.same(got, want, `${want.length} anchors, the same`)
  t.ok(want.some(([i]) => i === (1 << 20) - 1) || want.some(([i]) => i === 1 << 20) || want.length > 60_000, 'anchors around the window edge')
  t.same([...gotRing], [...wantRing], 'the ring after it')
})

t.test('the same sketch from the kernel and the JS loop: 2.5 MiB, and a first piece of 10 bytes', async (t) => {
  const data = randomBytes(22, 2.5 * (1 << 20))
  for (const sizes of [[1 << 20], [10, 700_000]]) {
    t.same(await sketchStream(splitStream(data, sizes), { kernel: 'wasm' }), await sketchStream(splitStream(data, sizes), { kernel: 'js' }), `pieces of ${sizes.join(', ')}`)
  }
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

/** r, the exact 32-byte rolling value (src/similarity/sketch.ts), at every position, by its definition. */
function rollingR(data: Uint8Array): number[] {
  const R = 0x01000193
  const out: number[] = []
  for (let q = 0; q < data.length; q++) {
    let x = 0
    for (let k = 31; k >= 0; k--) x = (Math.imul(x, R) + (q - k >= 0 ? data[q - k]! : 0)) | 0
    out.push(x)
  }
  return out
}

t.test('each anchor carries h(p − 32) and its windows (32 and 64 bytes ending at p, 64 centred; none in the last 32 bytes), as a plain pass finds them', async (t) => {
  for (const [seed, n] of [[41, 5000], [42, 60_000], [43, 70]] as const) {
    const data = randomBytes(seed, n)
    const s = sketchBytes(data, { windows: true })
    t.same(sketchBytes(data).windows, undefined, 'format 1 unless asked')
    // Gear's h and r at every position, by the definitions.
    const h = new Uint32Array(n)
    let v = 0
    for (let p = 0; p < n; p++) h[p] = v = ((v << 1) + GEAR[data[p]!]!) >>> 0
    const r = rollingR(data)
    const want = { short: [] as number[], prior: [] as number[], w32: [] as number[], w64: [] as number[], centred: [] as number[] }
    for (let p = LONG_WINDOW - 1; p < n; p++) {
      if (Math.clz32(h[p]!) < s.level) continue
      want.short.push(h[p]!)
      want.prior.push(h[p - 32]! & 0xffffff)
      want.w32.push(windowIdentity(r[p]!, 0, 0x32))
      want.w64.push(windowIdentity(r[p - 32]!, r[p]!, 0x64))
      want.centred.push(p + 32 < n ? windowIdentity(r[p]!, r[p + 32]!, 0xc3) : NO_AHEAD)
    }
    t.same([...s.short], want.short, `${n} bytes: the anchors`)
    t.same([...s.prior], want.prior, `${n} bytes: h(p − 32)`)
    t.same([...s.windows!.w32], want.w32, `${n} bytes: the 32 bytes ending at p`)
    t.same([...s.windows!.w64], want.w64, `${n} bytes: the 64 bytes ending at p`)
    t.same([...s.windows!.centred], want.centred, `${n} bytes: the 64 bytes centred on p`)
    if (n < 100) t.ok(want.centred.includes(NO_AHEAD), 'a small file samples every position: its last 32 have no centred window')
  }
})

t.test('the same windows for any split of the input', async (t) => {
  const data = randomBytes(44, 100_000)
  const whole = sketchBytes(data, { windows: true })
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }), async (sizes) => {
      t.same(await sketchStream(splitStream(data, sizes), { windows: true }), whole)
    }),
    { numRuns: 30 },
  )
})
