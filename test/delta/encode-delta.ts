import t from 'tap'
import fc from 'fast-check'
import { applyDelta, computeSignature, decodeSignature, EMPTY_SIGNATURE, encodeDelta, encodeSignature } from '../../src/delta/index.js'
import { collect, randomBytes, splitStream } from '../support/random.js'
import { applyEdit, editArb } from './support/edits.js'
import { concat, equalBytes, makeDelta, patchBytes } from './support/roundtrip.js'

const splitArb = fc.array(fc.integer({ min: 1, max: 9000 }), { minLength: 1, maxLength: 4 })

t.test('patch(seed, delta(signature(seed), target)) == target for random edits and buffer splits', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 1 << 30 }),
      fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 40000 })),
      fc.array(editArb, { maxLength: 6 }),
      fc.constantFrom(1, 7, 64, 256, 1000),
      splitArb,
      splitArb,
      splitArb,
      async (s, n, edits, blockSize, sigSplit, targetSplit, deltaSplit) => {
        const seed = randomBytes(s, n)
        const target = edits.reduce(applyEdit, seed)
        const { delta, stats } = await makeDelta(seed, target, { blockSize, sigSplit, targetSplit })
        const out = await patchBytes(seed, delta, deltaSplit)
        t.ok(equalBytes(out, target), 'rebuilt target equals the target')
        t.equal(stats.copiedBytes + stats.literalBytes, target.length)
        t.equal(stats.encodedBytes, delta.length)
      },
    ),
    { numRuns: 100 },
  )
})

t.test('a size hint, right or wrong, sizes the matcher\'s window and changes no byte of the delta', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 1 << 30 }),
      fc.integer({ min: 0, max: 400_000 }),
      fc.array(editArb, { maxLength: 4 }),
      fc.constantFrom(256, 1000, 4096),
      fc.oneof(fc.constantFrom(0, 1, -1, 0.5, 2), fc.integer({ min: 0, max: 1 << 23 })),
      async (s, n, edits, blockSize, hint) => {
        const seed = randomBytes(s, n)
        const target = edits.reduce(applyEdit, seed)
        const sig = await computeSignature(splitStream(seed, [65536]), { blockSize })
        const plain = concat(await collect(encodeDelta(sig, splitStream(target, [100_000])).bytes))
        // Small hints: 0, 1, one byte short of the target, half of it, one over; else any size.
        const sizeHint = hint === 0 ? 0 : hint === 1 ? 1 : hint === -1 ? target.length - 1 : hint === 0.5 ? target.length >> 1 : hint === 2 ? target.length + 1 : hint
        const hinted = concat(await collect(encodeDelta(sig, splitStream(target, [100_000]), { sizeHint }).bytes))
        return equalBytes(plain, hinted)
      },
    ),
    { numRuns: 40 },
  )
})

t.test('low-entropy seeds (runs of one byte, short periods) round-trip too', async (t) => {
  const period = new Uint8Array(30000).map((_, i) => i % 7)
  const zeros = new Uint8Array(30000)
  for (const seed of [period, zeros]) {
    const target = concat([seed.subarray(0, 12345), randomBytes(5, 10), seed.subarray(12000), new Uint8Array(500)])
    const { delta, stats } = await makeDelta(seed, target, { blockSize: 64 })
    t.ok(equalBytes(await patchBytes(seed, delta), target), 'rebuilt target equals the target')
    t.ok(stats.literalBytes <= 10 + 500 + 2 * 64, `literal ${stats.literalBytes}: the 10 new bytes, the 500 new zeros, at most 2 blocks around them`)
  }
})

t.test('a 1-byte change in a 1 MiB random file costs under 2 KiB of signature-chosen delta', async (t) => {
  const seed = randomBytes(11, 1 << 20)
  const target = seed.slice()
  target[654321]! ^= 0x55
  const { delta, sigBytes, stats } = await makeDelta(seed, target)
  t.ok(delta.length < 2048, `delta ${delta.length} B`)
  t.ok(sigBytes.length < 6 * 1024, `signature ${sigBytes.length} B`)
  t.equal(stats.literalBytes, 1024, 'one block of literal')
  t.ok(equalBytes(await patchBytes(seed, delta), target), 'rebuilt target equals the target')
})

t.test('an insertion near the start shifts nothing else: one block of literal', async (t) => {
  const seed = randomBytes(12, 4 << 20)
  const target = concat([seed.subarray(0, 1000), randomBytes(13, 100), seed.subarray(1000)])
  const { delta, stats } = await makeDelta(seed, target)
  t.ok(stats.literalBytes <= 100 + 2048, `literal ${stats.literalBytes}`)
  t.ok(delta.length < 3000, `delta ${delta.length}`)
  t.ok(equalBytes(await patchBytes(seed, delta), target), 'rebuilt target equals the target')
})

t.test('literals are compressed: an appended text log costs far less than its size', async (t) => {
  const line = (i: number) => `2024-05-01T12:00:${String(i % 60).padStart(2, '0')} INFO request ${i} served in ${i % 97} ms\n`
  const seedText = Array.from({ length: 20000 }, (_, i) => line(i)).join('')
  const more = Array.from({ length: 5000 }, (_, i) => line(20000 + i)).join('')
  const seed = new TextEncoder().encode(seedText)
  const target = new TextEncoder().encode(seedText + more)
  const { delta, stats } = await makeDelta(seed, target)
  t.equal(stats.literalBytes, more.length)
  t.ok(delta.length < more.length / 4, `delta ${delta.length} for ${more.length} appended`)
  t.ok(equalBytes(await patchBytes(seed, delta), target), 'rebuilt target equals the target')
})

t.test('against EMPTY_SIGNATURE the delta is the whole target, compressed', async (t) => {
  const target = new TextEncoder().encode('all work and no play '.repeat(5000))
  const d = encodeDelta(EMPTY_SIGNATURE, splitStream(target, [999]))
  const delta = concat(await collect(d.bytes))
  t.equal(d.stats().literalBytes, target.length)
  t.ok(delta.length < target.length / 20, `${delta.length} bytes`)
  t.ok(equalBytes(await patchBytes(null, delta), target), 'rebuilt target equals the target')
})

t.test('stats() before the stream ends is an INTERNAL error, not a wrong number', async (t) => {
  const d = encodeDelta(EMPTY_SIGNATURE, splitStream(new Uint8Array(10), [10]))
  t.throws(() => d.stats(), { code: 'INTERNAL' })
})

t.test('an aborted signal stops the delta with ABORTED', async (t) => {
  const ac = new AbortController()
  ac.abort()
  const d = encodeDelta(EMPTY_SIGNATURE, splitStream(new Uint8Array(10), [10]), { signal: ac.signal })
  await t.rejects(collect(d.bytes), { code: 'ABORTED' })
})

t.test('whole-file deltas (no seed) of every size round-trip: buffers that grow from small to full frames', async (t) => {
  for (const n of [0, 1, 16 * 1024 - 1, 16 * 1024 + 1, 300_000, (2 << 20) + 12345]) {
    const target = randomBytes(40 + n, n)
    const d = encodeDelta(EMPTY_SIGNATURE, splitStream(target, [7777, 65536]))
    const delta = concat(await collect(d.bytes))
    const out: Uint8Array[] = []
    await applyDelta(null, splitStream(delta, [1000]), { write: async (b) => void out.push(b.slice()) })
    t.ok(Buffer.from(concat(out)).equals(Buffer.from(target)), `${n} bytes`)
    t.equal(d.stats().literalBytes, n)
  }
})

t.test('owned input (buffers never reused): the same delta, byte for byte, with its whole stored frames views of the input, not copies', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: (3 << 20) + 5000 }), fc.array(fc.integer({ min: 1, max: 1_500_000 }), { minLength: 1, maxLength: 4 }), fc.boolean(), async (n, sizes, text) => {
      // At most ~2,000 pieces: fast-check favours small sizes, and 3 MiB in 1-byte pieces (each
      // through two encoders) took this test from ~1 s to over the 120 s file timeout.
      const split = sizes.map((s) => Math.max(s, Math.ceil(n / 2000)))
      const target = text ? new TextEncoder().encode('a line of text\n'.repeat(Math.ceil(n / 15))).subarray(0, n) : randomBytes(n + 3, n)
      // Each piece a buffer of its own, as openFileSource `fresh` yields them.
      const pieces = async function* () {
        for await (const b of splitStream(target, split)) yield b.slice()
      }
      const given: Uint8Array[] = []
      const owned = encodeDelta(EMPTY_SIGNATURE, (async function* () {
        for await (const b of pieces()) (given.push(b), yield b)
      })(), { ownedInput: true })
      const plain = encodeDelta(EMPTY_SIGNATURE, pieces())
      const a = await collect(owned.bytes)
      const b = concat(await collect(plain.bytes))
      t.ok(Buffer.from(concat(a)).equals(Buffer.from(b)), `${n} bytes in pieces of ${split.join(', ')}: the same delta`)
      if (text) t.equal(a.filter((x) => given.some((g) => g.buffer === x.buffer)).length, 0, 'compressed frames are new bytes')
    }),
    { numRuns: 25 },
  )
  // Read as a file is, 1 MiB at a time: each full frame of random bytes is the read's own buffer.
  const target = randomBytes(77, (3 << 20) + 5000)
  const given = [0, 1, 2, 3].map((i) => target.slice(i << 20, (i + 1) << 20))
  const out = await collect(encodeDelta(EMPTY_SIGNATURE, given, { ownedInput: true }).bytes)
  t.equal(out.filter((x) => given.some((g) => g.buffer === x.buffer)).length, 3, 'three stored frames, none copied')
  const back: Uint8Array[] = []
  await applyDelta(null, splitStream(concat(out), [1 << 20]), { write: async (b) => void back.push(b.slice()) })
  t.ok(Buffer.from(concat(back)).equals(Buffer.from(target)), 'and it patches back to the file')
})

t.test('near-collisions: every block with one bit flipped is sent as literal, and the patch is exact', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 1 << 30 }), fc.constantFrom(64, 256, 1000), fc.integer({ min: 0, max: 1 << 30 }), async (s, blockSize, flipSeed) => {
      const seed = randomBytes(s, 20 * blockSize)
      const target = seed.slice()
      const where = randomBytes(flipSeed, 20 * 4)
      // Flip one bit in every other block: each flipped block differs from a seed block by one
      // bit, the closest a natural edit comes to a false match.
      for (let k = 0; k < 20; k += 2) target[k * blockSize + (where[4 * k]! % blockSize)]! ^= 1 << (where[4 * k + 1]! & 7)
      const { delta, stats } = await makeDelta(seed, target, { blockSize })
      t.ok(equalBytes(await patchBytes(seed, delta), target), 'rebuilt target equals the target')
      t.ok(stats.literalBytes >= 10 * blockSize, `literal ${stats.literalBytes}: no flipped block was taken as a copy`)
    }),
    { numRuns: 30 },
  )
})

t.test('a forced false match ends in DIGEST_MISMATCH, never in a wrong file', async (t) => {
  const seed = randomBytes(71, 64 * 1024)
  const target = randomBytes(72, 64 * 1024)
  const full = await computeSignature(splitStream(seed, [65536]), { blockSize: 256 })
  // 1 + 1 bits per block: most windows of an unrelated target "match" some block.
  const weak = full.weak.map((w) => w >>> (full.weakBits - 1))
  const strong = full.strong.map((x) => x >>> (full.strongBits - 1))
  const sig = decodeSignature(encodeSignature({ ...full, weakBits: 1, strongBits: 1, weak, strong }))
  const d = encodeDelta(sig, splitStream(target, [65536]))
  const delta = concat(await collect(d.bytes))
  t.ok(d.stats().copiedBytes > 0, `${d.stats().copiedBytes} bytes falsely matched`)
  await t.rejects(patchBytes(seed, delta), { code: 'DIGEST_MISMATCH' })
})

t.test('overwrites two blocks apart cost two blocks: the block between is taken where the run predicts it', async (t) => {
  const seed = randomBytes(81, 40 * 256)
  const target = seed.slice()
  // Blocks 5 and 7 overwritten: block 6 has no confirming block after it, block 39 (the last)
  // none at all once block 38 is overwritten.
  for (const k of [5, 7, 38]) target[k * 256 + 100]! ^= 0xff
  const { delta, stats } = await makeDelta(seed, target, { blockSize: 256 })
  t.equal(stats.literalBytes, 3 * 256, 'only the three overwritten blocks are literal')
  t.ok(equalBytes(await patchBytes(seed, delta), target), 'rebuilt target equals the target')
})

t.test('after 4 frames that look random, frames are probed thinly; a frame that does not look random brings the full probe back', async (t) => {
  const MiB = 1 << 20
  const text = new TextEncoder().encode('export function main(argv: string[]): number { return argv.length }\n'.repeat(16 * 1024))
  const randoms = [1, 2, 3, 4, 5].map((s) => randomBytes(100 + s, MiB))
  // 40 KiB of text between the thin probe's slices (one every ~146 KiB), on one of the full probe's (one every ~33 KiB)
  const mixed = randomBytes(99, MiB)
  mixed.set(text.subarray(0, 40 * 1024), 40_000)
  const size = async (frames: Uint8Array[]): Promise<number> => (await collect(encodeDelta(EMPTY_SIGNATURE, frames).bytes)).reduce((n, b) => n + b.length, 0)
  const thin = await size([...randoms, mixed])
  t.ok(thin > 6 * MiB, `after 5 random frames the mixed one is stored: ${thin} bytes for 6 MiB`)
  const full = await size([...randoms.slice(0, 4), text.subarray(0, MiB), mixed])
  t.ok(full < 5 * MiB - 30 * 1024, `after a text frame it is compressed again: ${full} bytes for 4 MiB random + 1 MiB text + the mixed one`)
  const fresh = await size([mixed])
  t.ok(fresh < MiB - 30 * 1024, `alone, the mixed frame is compressed: ${fresh}`)
  const more = [6, 7, 8].map((s) => randomBytes(100 + s, MiB))
  const eighth = await size([...randoms, ...more.slice(0, 3), mixed])
  t.ok(eighth < 8 * MiB + fresh + 1024, `the 8th frame after the thinning is probed in full: ${eighth} bytes for 8 MiB random + the mixed one`)
})
