import t from 'tap'
import { chunkParams } from '../../src/chunk/index.js'
import { sketchBytes } from '../../src/similarity/index.js'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { walkTree, type TreeEntry } from '../../src/fs/index.js'
import { INDEX_ANCHORS, indexedSketch, POSTED_BYTES, POSTED_MIN, probeAnchorKeys, Store, updateSketchIndex } from '../../src/store/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'

t.test('put, look up, find by shared anchors, replace, remove; survives a reopen', async (t) => {
  const dir = await tempTree(t)
  const a = randomBytes(1, 60_000)
  let store = await Store.open(dir, { params: chunkParams() })
  let index = store.sketchIndex()
  await index.putMany([
    { path: 'a', size: a.length, mtimeMs: 5, sketch: sketchBytes(a) },
    { path: 'b', size: 40_000, mtimeMs: 6, sketch: sketchBytes(randomBytes(2, 40_000)) },
  ])
  await store.close()
  store = await Store.open(dir, { params: chunkParams() })
  index = store.sketchIndex()
  t.match(index.lookup('a'), { path: 'a', size: 60_000, mtimeMs: 5 })
  t.equal(index.lookup('zzz'), undefined)
  const id = index.lookup('a')!.id
  t.same([...index.candidates(sketchBytes(a.subarray(0, 30_000))).keys()], [id], 'only the file that shares content')
  t.equal(index.sketchOf(id)!.size, 60_000)

  // Replaced by other content: its old postings go.
  await index.putMany([{ path: 'a', size: 10_000, mtimeMs: 7, sketch: sketchBytes(randomBytes(3, 10_000)) }])
  t.equal(index.candidates(sketchBytes(a)).size, 0)
  t.equal(index.lookup('a')!.id, id, 'same path, same id')
  await index.removeMany(['a', 'missing'])
  t.same(index.paths(), ['b'])
  await store.close()
})

t.test('the index keeps a sketch cut to a coarser level, never more than its budget', async (t) => {
  const small = indexedSketch(sketchBytes(randomBytes(4, 8192)))
  t.ok(small.short.length <= INDEX_ANCHORS && small.short.length > INDEX_ANCHORS / 4, `${small.short.length} anchors`)
  const big = indexedSketch(sketchBytes(randomBytes(5, 4 << 20)))
  t.ok(big.short.length <= 2048 && big.short.length > 1000, `4 MiB: ${big.short.length} anchors`)
})

t.test('a file is posted under its highest anchors: POSTED_MIN for a small one, one per POSTED_BYTES of a big one; a probe of them finds it', async (t) => {
  const dir = await tempTree(t)
  const store = await Store.open(dir, { params: chunkParams() })
  t.teardown(() => store.close())
  const index = store.sketchIndex()
  const big = randomBytes(61, 512 * 1024)
  const small = randomBytes(62, 16 * 1024)
  await index.putMany([
    { path: 'big', size: big.length, mtimeMs: 1, sketch: sketchBytes(big) },
    { path: 'small', size: small.length, mtimeMs: 1, sketch: sketchBytes(small) },
  ])
  const hits = (data: Uint8Array, n: number): number[] => [...index.candidatesOfKeys(probeAnchorKeys(sketchBytes(data), n)).values()]
  t.same(hits(big, 1024), [big.length / POSTED_BYTES], 'a 512 KiB file: 128 keys posted')
  t.same(hits(small, 1024), [POSTED_MIN], 'a 16 KiB file: POSTED_MIN keys')
  // The probe's highest anchors are the posted ones: every one of them hits.
  t.same(hits(big, 64), [64])
  // Entries of an older rule (any subset of the sketch's anchors) leave nothing behind.
  await index.putMany([{ path: 'big', size: 10, mtimeMs: 2, sketch: sketchBytes(randomBytes(63, 10)) }])
  t.same(hits(big, 1024), [])
})

t.test('updateSketchIndex: from a listing given (no walk), small files not read; a changed small file\'s entry dropped, an unchanged one kept', async (t) => {
  const big = randomBytes(6, 80_000)
  const dir = await tempTree(t, { 'big.bin': big, 'small.txt': 'x'.repeat(1000), 'sub/other.bin': randomBytes(7, 70_000) })
  const store = await Store.open(dir, { params: chunkParams() })
  t.teardown(() => store.close())
  const index = store.sketchIndex()
  // A full scan, as `dsync similar --scan` makes: every file.
  t.match(await updateSketchIndex(dir, index), { files: 3, filesRead: 3 })
  t.same(index.paths().sort(), ['big.bin', 'small.txt', 'sub/other.bin'])
  const listed = async (): Promise<TreeEntry[]> => {
    const out: TreeEntry[] = []
    for await (const e of walkTree(dir)) out.push(e)
    return out
  }
  // Unchanged: nothing read, the small file's entry kept.
  t.match(await updateSketchIndex(dir, index, { entries: await listed(), minSize: 64 * 1024 }), { files: 3, filesRead: 0, removed: 0 })
  t.same(index.paths().sort(), ['big.bin', 'small.txt', 'sub/other.bin'])
  // Changed: the big one is read again; the small one is not, and its stale entry goes.
  await writeFile(join(dir, 'small.txt'), 'y'.repeat(2000))
  await writeFile(join(dir, 'big.bin'), randomBytes(8, 90_000))
  await writeFile(join(dir, 'new-small.txt'), 'z'.repeat(500))
  t.match(await updateSketchIndex(dir, index, { entries: await listed(), minSize: 64 * 1024 }), { files: 4, filesRead: 1, removed: 1 })
  t.same(index.paths().sort(), ['big.bin', 'sub/other.bin'])
  t.match(index.lookup('big.bin'), { size: 90_000 })
  // The listing is what counts: a file it leaves out is forgotten, though still on disk; one it
  // names is read from the tree.
  t.match(await updateSketchIndex(dir, index, { entries: (await listed()).filter((e) => e.path !== 'sub/other.bin'), minSize: 64 * 1024 }), { filesRead: 0, removed: 1 })
  t.same(index.paths(), ['big.bin'])
})
