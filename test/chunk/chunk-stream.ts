import t from 'tap'
import fc from 'fast-check'
import { cdcCutter, chunkBytes, chunkFile, chunkList, chunkParams, chunkStream, fspCutter, type Cutter } from '../../src/chunk/index.js'
import { digestBytes, fingerprint } from '../../src/hash/index.js'
import { collect, randomBytes, splitStream } from '../support/random.js'

const small = chunkParams({ avg: 256 }) // small chunks: many boundaries per test input

async function spans(data: Uint8Array, cutter: Cutter, sizes: number[]) {
  return (await collect(chunkStream(splitStream(data, sizes), cutter))).map((s) => [s.offset, s.length] as const)
}

t.test('boundaries are the same for any split of the input into buffers', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 20000 }),
      fc.integer({ min: 1, max: 1 << 30 }),
      fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 8 }),
      async (n, seed, sizes) => {
        const data = randomBytes(seed, n)
        for (const cutter of [cdcCutter(small), fspCutter(chunkParams({ kind: 'fsp', avg: 300 }))]) {
          const whole = chunkBytes(data, cutter).map((c) => [c.offset, c.length] as const)
          t.same(await spans(data, cutter, sizes), whole)
        }
      },
    ),
    { numRuns: 60 },
  )
})

t.test('chunks concatenate to the input and respect min and max (all but the last)', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 60000 }), fc.integer({ min: 1, max: 1 << 30 }), async (n, seed) => {
      const data = randomBytes(seed, n)
      const chunks = chunkBytes(data, cdcCutter(small))
      let pos = 0
      chunks.forEach((c, i) => {
        t.equal(c.offset, pos)
        if (i < chunks.length - 1) t.ok(c.length >= small.min && c.length <= small.max, `chunk ${i} size ${c.length}`)
        pos += c.length
      })
      t.equal(pos, n)
    }),
    { numRuns: 40 },
  )
})

t.test('given the bytes\' digest, chunkBytes gives the same chunks and fingerprints: a whole-file chunk takes its fingerprint from the digest', async (t) => {
  const cutter = cdcCutter(small)
  let single = 0
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 1, max: 1 << 30 }), async (n, seed) => {
      const data = randomBytes(seed, n)
      const plain = chunkBytes(data, cutter)
      const told = chunkBytes(data, cutter, digestBytes(data))
      t.same(told, plain)
      if (told.length === 1) {
        single++
        t.equal(told[0]!.fp, fingerprint(data))
      }
    }),
    { numRuns: 120 },
  )
  // Inputs of up to 3,000 bytes at 256 B chunks: both one chunk and several came up.
  t.ok(single > 0 && single < 120, `${single} of 120 inputs were one chunk`)
  // A digest that is not the bytes' shows where it is used: only for a chunk that is all of them.
  const data = randomBytes(3, 40)
  const wrong = digestBytes(new Uint8Array([1]))
  t.equal(chunkBytes(data, cutter, wrong)[0]!.fp, wrong.slice(0, 32))
  const long = randomBytes(4, 5000)
  t.same(chunkBytes(long, cutter, wrong), chunkBytes(long, cutter), 'several chunks: each hashed')
})

t.test('a stream larger than the working buffer chunks the same as in memory', async (t) => {
  const data = randomBytes(7, 9 * 1024 * 1024 + 123)
  const cutter = cdcCutter(chunkParams())
  const file = await chunkFile(splitStream(data, [1 << 20, 777, 65536]), cutter)
  t.same(
    file.chunks.map((c) => [c.offset, c.length, c.fp]),
    chunkBytes(data, cutter).map((c) => [c.offset, c.length, c.fp]),
  )
  t.equal(file.size, data.length)
  t.equal(file.digest, digestBytes(data))
})

t.test('an insertion near the start changes only the chunks near it', async (t) => {
  const data = randomBytes(11, 400000)
  const edited = new Uint8Array(data.length + 10)
  edited.set(data.subarray(0, 5000))
  edited.set(randomBytes(99, 10), 5000)
  edited.set(data.subarray(5000), 5010)
  const params = chunkParams({ avg: 2048 })
  const a = chunkBytes(data, cdcCutter(params)).map((c) => c.fp)
  const b = new Set(chunkBytes(edited, cdcCutter(params)).map((c) => c.fp))
  const lost = a.filter((fp) => !b.has(fp)).length
  t.ok(lost <= 2, `only ${lost} chunk(s) changed of ${a.length}`)
})

t.test('FSP: an insertion shifts every later block (why CDC is the default)', async (t) => {
  const data = randomBytes(12, 100000)
  const edited = new Uint8Array([1, ...data])
  const params = chunkParams({ kind: 'fsp', avg: 1000 })
  const a = new Set(chunkBytes(data, fspCutter(params)).map((c) => c.fp))
  const shared = chunkBytes(edited, fspCutter(params)).filter((c) => a.has(c.fp)).length
  t.equal(shared, 0)
})

t.test('an aborted signal stops chunking with ABORTED', async (t) => {
  const ac = new AbortController()
  ac.abort()
  await t.rejects(collect(chunkStream(splitStream(randomBytes(1, 1000), [100]), cdcCutter(small), { signal: ac.signal })), {
    code: 'ABORTED',
  })
})

t.test('chunkList gives the chunks of chunkFile, without the digest', async (t) => {
  const data = randomBytes(31, 3 * 1024 * 1024 + 17)
  const cutter = cdcCutter(chunkParams())
  t.same(await chunkList(splitStream(data, [65536, 999]), cutter), (await chunkFile(splitStream(data, [1 << 20]), cutter)).chunks)
})
