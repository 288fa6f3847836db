import t from 'tap'
import { symlink, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readRanges } from '../../src/delta/read-ranges.js'
import { HELD_SEED_BYTES, memorySeedReader, memorySeedSource, openSeedReader, openSeedsReader, readSeedsWhole } from '../../src/fs/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'

const a = randomBytes(31, 300_000)
const b = randomBytes(32, 200_000)
const both = Buffer.concat([a, b])

/** Random ranges over `size` bytes: small ones (read with a synchronous call) and some over
 *  64 KiB (asynchronous), some across the two files. */
function ranges(size: number, n: number, seed: number): { offset: number; length: number }[] {
  let s = seed
  const next = (m: number): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) % m
  return Array.from({ length: n }, (_, i) => {
    const length = 1 + (i % 5 === 0 ? next(150_000) : next(3000))
    return { offset: next(size - length), length }
  })
}

t.test('reads in flight together each get their own bytes: one file, and two files read as one', async (t) => {
  const dir = await tempTree(t, { a, b })
  for (const [name, open, bytes] of [
    ['one file', () => openSeedReader(join(dir, 'a')), a],
    ['one file, small reads synchronous', () => openSeedReader(join(dir, 'a'), { syncSmall: true }), a],
    ['two files', () => openSeedsReader([join(dir, 'a'), join(dir, 'b')]), both],
    ['two files, small reads synchronous', () => openSeedsReader([join(dir, 'a'), join(dir, 'b')], { syncSmall: true }), both],
  ] as const) {
    const reader = await open()
    try {
      const want = ranges(bytes.length, 200, 5)
      const got = await Promise.all(want.map((r) => reader.read(r.offset, r.length)))
      t.ok(want.every((r, i) => Buffer.from(got[i]!).equals(bytes.subarray(r.offset, r.offset + r.length))), `${name}: 200 reads at once`)
      let ok = true
      for await (const p of readRanges(reader, want, { piece: 4096 })) {
        const r = want[p.range]!
        ok &&= Buffer.from(p.bytes).equals(bytes.subarray(r.offset + p.at, r.offset + p.at + p.bytes.length))
      }
      t.ok(ok, `${name}: read ahead by readRanges`)
    } finally {
      await reader.close()
    }
  }
})

t.test('a seed that shrank under a read is an IO error, by either kind of read; a read once closed too', async (t) => {
  const dir = await tempTree(t, { a })
  const reader = await openSeedReader(join(dir, 'a'), { syncSmall: true })
  try {
    await truncate(join(dir, 'a'), 1000)
    await t.rejects(reader.read(2000, 100), { code: 'IO' }, 'small read (synchronous)')
    await t.rejects(reader.read(2000, 100_000), { code: 'IO' }, 'large read')
  } finally {
    await reader.close()
  }
  await t.rejects(reader.read(0, 100), { code: 'IO', message: /closed/ }, 'closed: said so')
})

t.test('small seeds read whole once: their bytes one after another, only at the sizes listed', async (t) => {
  const x = randomBytes(33, 40_000)
  const y = randomBytes(34, 9_000)
  const dir = await tempTree(t, { x, y })
  t.ok(HELD_SEED_BYTES >= x.length + y.length, 'both fit the bound')
  const one = await readSeedsWhole([join(dir, 'x')], [x.length], { noFollow: true })
  t.ok(one !== undefined && Buffer.from(one).equals(x), 'one seed')
  const two = await readSeedsWhole([join(dir, 'x'), join(dir, 'y')], [x.length, y.length], { noFollow: true })
  t.ok(two !== undefined && Buffer.from(two).equals(Buffer.concat([x, y])), 'two seeds, in order')
  // Changed since listed: grown or shrunk, the caller reads the files instead and finds out there.
  t.equal(await readSeedsWhole([join(dir, 'x'), join(dir, 'y')], [x.length, y.length + 1]), undefined, 'one shorter than listed')
  t.equal(await readSeedsWhole([join(dir, 'x')], [x.length - 1]), undefined, 'one longer than listed')
  await symlink(join(dir, 'x'), join(dir, 'link'))
  await t.rejects(readSeedsWhole([join(dir, 'link')], [x.length], { noFollow: true }), { code: 'UNSAFE_PATH' }, 'a symlink is not followed')
  await writeFile(join(dir, 'x'), 'changed')
  t.ok(one !== undefined && Buffer.from(one).equals(x), 'the bytes read stay what was read')
})

t.test('held seed bytes read as a seed reader and as a source, views of the same bytes', async (t) => {
  const bytes = randomBytes(35, 100_000)
  const reader = memorySeedReader(bytes)
  t.equal(reader.size, bytes.length)
  const want = ranges(bytes.length, 100, 9)
  const got = await Promise.all(want.map((r) => reader.read(r.offset, r.length)))
  t.ok(want.every((r, i) => Buffer.from(got[i]!).equals(bytes.subarray(r.offset, r.offset + r.length))), '100 reads at once')
  await reader.close()
  const parts: Uint8Array[] = []
  for await (const b of memorySeedSource(bytes)) parts.push(b)
  t.ok(Buffer.concat(parts).equals(bytes), 'the source yields the bytes')
})
