import t from 'tap'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { computeSignature, EMPTY_SIGNATURE, encodeDelta } from '../../src/delta/index.js'
import { memorySeedReader, openFileSource, openFilesSource, openSeedReader, openSeedsReader, patchFile } from '../../src/fs/index.js'
import { collect, randomBytes, splitStream } from '../support/random.js'
import { tempTree } from '../support/temp.js'

async function deltaFor(seedPath: string | null, target: Uint8Array): Promise<Uint8Array> {
  const sig = seedPath === null ? EMPTY_SIGNATURE : await computeSignature(openFileSource(seedPath))
  return Buffer.concat(await collect(encodeDelta(sig, splitStream(target, [100000])).bytes))
}

const seed = randomBytes(1, 300000)
const target = Buffer.concat([seed.subarray(0, 100000), randomBytes(2, 1000), seed.subarray(150000)])

t.test('patches into a new file, and in place (seed path = out path)', async (t) => {
  const dir = await tempTree(t, { seed })
  const delta = await deltaFor(join(dir, 'seed'), target)
  const r = await patchFile(join(dir, 'seed'), splitStream(delta, [333]), join(dir, 'out'), { mode: 0o600 })
  t.equal(r.size, target.length)
  t.ok((await readFile(join(dir, 'out'))).equals(target))
  await patchFile(join(dir, 'seed'), splitStream(delta, [4096]), join(dir, 'seed'))
  t.ok((await readFile(join(dir, 'seed'))).equals(target), 'in place')
  t.same((await readdir(dir)).sort(), ['out', 'seed'])
})

t.test('patches from a seed held in memory, in place too, whatever the file holds by then', async (t) => {
  const dir = await tempTree(t, { seed })
  const delta = await deltaFor(join(dir, 'seed'), target)
  const held = memorySeedReader(Buffer.from(seed))
  // The file is not read: what it holds now does not matter, the bytes held do.
  await writeFile(join(dir, 'seed'), 'something else')
  const r = await patchFile(held, splitStream(delta, [777]), join(dir, 'seed'))
  t.equal(r.size, target.length)
  t.ok((await readFile(join(dir, 'seed'))).equals(target), 'rebuilt from the held bytes')
  t.same(await readdir(dir), ['seed'], 'no temp file left')
})

t.test('a corrupted delta leaves the out path untouched and no temp file', async (t) => {
  const dir = await tempTree(t, { seed, out: 'previous' })
  const delta = await deltaFor(join(dir, 'seed'), target)
  const bad = delta.slice()
  bad[bad.length - 5]! ^= 1 // inside the trailer's SHA-256
  await t.rejects(patchFile(join(dir, 'seed'), splitStream(bad, [1000]), join(dir, 'out')), { code: 'DIGEST_MISMATCH' })
  await t.rejects(patchFile(join(dir, 'seed'), splitStream(delta.subarray(0, 500), [1000]), join(dir, 'out')), { code: 'BAD_DATA' })
  t.equal(await readFile(join(dir, 'out'), 'utf8'), 'previous')
  t.same((await readdir(dir)).sort(), ['out', 'seed'])
})

t.test('a whole-file delta needs no seed; a missing seed is NOT_FOUND', async (t) => {
  const dir = await tempTree(t)
  await patchFile(null, splitStream(await deltaFor(null, target), [5000]), join(dir, 'out'))
  t.ok((await readFile(join(dir, 'out'))).equals(target))
  await t.rejects(patchFile(join(dir, 'missing'), splitStream(new Uint8Array(1), [1]), join(dir, 'x')), { code: 'NOT_FOUND' })
})

t.test('the seed reader reads exact ranges and notices a seed that shrank', async (t) => {
  const dir = await tempTree(t, { seed })
  const r = await openSeedReader(join(dir, 'seed'))
  t.teardown(() => r.close())
  t.equal(r.size, seed.length)
  t.ok(Buffer.from(await r.read(1234, 5000)).equals(seed.subarray(1234, 6234)))
  await writeFile(join(dir, 'seed'), 'short')
  await t.rejects(r.read(1000, 10), { code: 'IO', message: /shrank/ })
})

t.test('several seeds read as one: ranges across their boundaries, and a delta copying from both', async (t) => {
  const other = randomBytes(3, 70000)
  const dir = await tempTree(t, { seed, other })
  const both = Buffer.concat([seed, other])
  const paths = [join(dir, 'seed'), join(dir, 'other')]
  const r = await openSeedsReader(paths)
  t.teardown(() => r.close())
  t.equal(r.size, both.length)
  for (const [at, n] of [[0, 10], [seed.length - 7, 20], [seed.length, 70000], [123, seed.length + 1000], [both.length - 1, 1]] as const) {
    t.ok(Buffer.from(await r.read(at, n)).equals(both.subarray(at, at + n)), `read(${at}, ${n})`)
  }
  await t.rejects(r.read(both.length - 5, 10), { code: 'IO' }, 'past the end of the seeds')
  t.ok(Buffer.from(Buffer.concat(await collect(openFilesSource(paths)))).equals(both), 'streamed one after the other')
  // A file made of a piece of each seed and a little new: rebuilt from both.
  const made = Buffer.concat([other.subarray(5000, 45000), seed.subarray(200000, 260000), randomBytes(4, 500)])
  const sig = await computeSignature(openFilesSource(paths))
  const delta = Buffer.concat(await collect(encodeDelta(sig, splitStream(made, [65536])).bytes))
  t.ok(delta.length < 8000, `a ${delta.length}-byte delta for ${made.length} bytes`)
  const res = await patchFile(paths, splitStream(delta, [1000]), join(dir, 'made'))
  t.ok((await readFile(join(dir, 'made'))).equals(made))
  t.ok(res.copiedBytes >= 90000, `${res.copiedBytes} bytes copied from the two seeds`)
})
