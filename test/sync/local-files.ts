import { chmod, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { chunkParams, type ChunkParams } from '../../src/index.js'
import { Store } from '../../src/store/index.js'
import type { DsyncError } from '../../src/errors.js'
import { LocalFiles } from '../../src/sync/local-files.js'
import { randomBytes } from '../support/random.js'
import { TEST_PARAMS as params } from '../support/records.js'
import { tempTree } from '../support/temp.js'

/** Sets every file's mtime an hour back, out of the racy window, as files that have sat a while. */
async function age(root: string, paths: readonly string[], secondsAgo = 3600): Promise<void> {
  const when = Date.now() / 1000 - secondsAgo + 0.123
  for (const p of paths) await utimes(join(root, p), when, when)
}

async function setup(t: Test, files: Record<string, string | Uint8Array>) {
  const root = await tempTree(t, files)
  await age(root, Object.keys(files))
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  return { root, store }
}

/** A session's view of the tree: the walk, then (`index`) every file's content brought up to date. */
async function scan(
  root: string,
  store: Store,
  opts: { params?: ChunkParams; exclude?: string[]; checksum?: boolean; signal?: AbortSignal; onError?: (e: DsyncError) => void; index?: boolean } = {},
): Promise<LocalFiles> {
  const files = await LocalFiles.scan(root, store, {
    params: opts.params ?? params,
    signal: opts.signal ?? new AbortController().signal,
    ...(opts.exclude && { exclude: opts.exclude }),
    ...(opts.checksum && { checksum: true }),
    ...(opts.onError && { onError: opts.onError }),
  })
  if (opts.index !== false) await files.indexAll()
  await files.flush()
  return files
}

t.test('the walk reads no file; indexing reads each once, then none until one is edited', async (t) => {
  const files = { 'a.txt': 'alpha', 'd/b.bin': randomBytes(1, 5000), 'd/e/c.txt': 'gamma' }
  const { root, store } = await setup(t, files)
  t.equal((await scan(root, store, { index: false })).filesRead, 0, 'the walk alone reads nothing')
  let r = await scan(root, store)
  t.equal(r.filesRead, 3)
  t.equal(r.bytesRead, 5010)
  t.same([...r.entries()].map((e) => e.path), ['a.txt', 'd', 'd/b.bin', 'd/e', 'd/e/c.txt'])
  t.same(store.get('d/b.bin')?.size, 5000)

  r = await scan(root, store)
  t.equal(r.filesRead, 0, 'a second pass reads no file')
  t.equal(r.bytesRead, 0)
  t.match(r.known('d/b.bin'), { size: 5000 })
  t.equal(r.known('d'), undefined, 'a directory has no record')

  await writeFile(join(root, 'd/e/c.txt'), 'GAMMA') // same size: only the mtime tells
  await age(root, ['d/e/c.txt'], 60)
  r = await scan(root, store)
  t.equal(r.filesRead, 1)
  t.equal(store.findByDigest(r.known('d/e/c.txt')!.digest)[0], 'd/e/c.txt')
})

t.test('vanished and newly excluded files lose their records; new files gain one', async (t) => {
  const { root, store } = await setup(t, { 'keep.txt': 'k', 'gone.txt': 'g', 'x.log': 'l' })
  await scan(root, store)
  t.same(store.recordPaths().sort(), ['gone.txt', 'keep.txt', 'x.log'])
  await rm(join(root, 'gone.txt'))
  await writeFile(join(root, 'new.txt'), 'n')
  await age(root, ['new.txt'])
  const r = await scan(root, store, { exclude: ['*.log'] })
  t.equal(r.filesRead, 1)
  t.same(store.recordPaths().sort(), ['keep.txt', 'new.txt'])
})

t.test('checksum mode reads every file asked about even when size and mtime match', async (t) => {
  const { root, store } = await setup(t, { a: 'a', b: 'bb' })
  await scan(root, store)
  const r = await scan(root, store, { checksum: true, index: false })
  for (const p of ['a', 'b']) await r.record(p)
  t.equal(r.filesRead, 2)
  await r.record('a')
  t.equal(r.filesRead, 2, 'once a session')
})

t.test('a mode change is seen without reading the file', async (t) => {
  const { root, store } = await setup(t, { 'run.sh': '#!/bin/sh\n' })
  await scan(root, store)
  await chmod(join(root, 'run.sh'), 0o755)
  const r = await scan(root, store)
  t.equal(r.filesRead, 0)
  t.equal(r.known('run.sh')?.mode, 0o755)
})

t.test('a file read within the racy window is read again next time, then trusted', async (t) => {
  const root = await tempTree(t, { 'hot.txt': 'v1' })
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const now = Date.now() / 1000
  await utimes(join(root, 'hot.txt'), now, now + 0.5) // an mtime "now": a same-tick edit could follow
  const first = await scan(root, store)
  t.equal(first.filesRead, 1)
  t.match(first.known('hot.txt'), { size: 2 }, 'known for the rest of the session that read it, racy or not')
  await first.indexAll()
  t.equal(first.filesRead, 1, 'and not read again in it')
  t.equal((await scan(root, store)).filesRead, 1, 'racy: not trusted by the next session')
  await age(root, ['hot.txt'])
  t.equal((await scan(root, store)).filesRead, 1, 'mtime changed: read')
  t.equal((await scan(root, store)).filesRead, 0, 'old enough: trusted')
})

t.test('changed params make the next pass re-read everything', async (t) => {
  const { root, store } = await setup(t, { a: randomBytes(2, 3000) })
  await scan(root, store)
  await store.close()
  const other = chunkParams({ avg: 1024 })
  const s2 = await Store.open(root, { params: other })
  t.teardown(() => s2.close())
  t.equal((await scan(root, s2, { params: other })).filesRead, 1)
})

t.test('an entry the walk cannot carry is reported through onError and left out; ABORTED stops the reads', async (t) => {
  const { root, store } = await setup(t, { 'ok.txt': 'fine', 'bad\\name': 'x' })
  const errors: DsyncError[] = []
  const r = await scan(root, store, { onError: (e) => errors.push(e) })
  t.same([...r.entries()].map((e) => e.path), ['ok.txt'])
  t.match(errors, [{ code: 'UNSAFE_PATH' }])
  const ac = new AbortController()
  ac.abort()
  await t.rejects(scan(root, store, { signal: ac.signal, checksum: true }), { code: 'ABORTED' })
})

t.test('small files chunked in memory get the same record as the streaming chunker gives', async (t) => {
  const { chunkPath } = await import('../../src/fs/index.js')
  const sizes = [0, 1, 255, 4096, 100_000, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024]
  const files = Object.fromEntries(sizes.map((n, i) => [`f${n}`, randomBytes(20 + i, n)]))
  const { root, store } = await setup(t, files)
  const r = await scan(root, store)
  for (const n of sizes) {
    const want = await chunkPath(join(root, `f${n}`), params)
    t.match(r.known(`f${n}`), { size: want.size, digest: want.digest, chunks: want.chunks }, `${n} bytes`)
  }
})

t.test('indexSize reads only the files of that size, once a session, and follows entries set and deleted', async (t) => {
  const { root, store } = await setup(t, { 'a.txt': 'aaaa', 'b.txt': 'bbbb', 'c.txt': 'cccccc', 'd/e.txt': 'eeee' })
  const files = await scan(root, store, { index: false })
  await files.indexSize(4)
  t.equal(files.filesRead, 3, 'the three 4-byte files')
  t.ok(files.known('a.txt') && files.known('d/e.txt'), 'each has a current record')
  t.equal(files.known('c.txt'), undefined, 'the 6-byte file is not read')
  await files.indexSize(4)
  t.equal(files.filesRead, 3, 'asked again: nothing read')
  await Promise.all([files.indexSize(6), files.indexSize(6)])
  t.equal(files.filesRead, 4, 'two asks at once read the file once')
  t.equal(store.findByDigest(files.known('c.txt')!.digest)[0], 'c.txt', 'in the store once the pass ends')

  // An entry that changes size moves with it; a deleted one is gone from its size.
  await writeFile(join(root, 'b.txt'), 'bbbbbbbbb')
  await age(root, ['b.txt'], 60)
  const st = await stat(join(root, 'b.txt'))
  files.set({ ...files.get('b.txt')!, size: st.size, mtimeMs: st.mtimeMs })
  files.delete('a.txt')
  await files.indexSize(9)
  t.equal(files.filesRead, 5, 'b.txt read again under its new size')
  t.equal(files.known('b.txt')?.size, 9)
})

t.test('what the session sets and deletes is seen over the walk, in the walk\'s order, made entries last; reads leave the walk as it was', async (t) => {
  const { root, store } = await setup(t, { 'a/1.txt': 'one', 'a/2.txt': 'two', 'b.txt': 'bee' })
  const files = await scan(root, store) // indexAll reads every file
  const paths = (): string[] => [...files.entries()].map((e) => `${e.path}:${e.kind === 'file' ? e.size : e.kind}`)
  t.same(paths(), ['a:dir', 'a/1.txt:3', 'a/2.txt:3', 'b.txt:3'], 'the walk, read through, unchanged')
  files.set({ path: 'a/0.txt', kind: 'file', size: 9, mtimeMs: 1, mode: 0o644 })
  files.set({ path: 'a/2.txt', kind: 'file', size: 7, mtimeMs: 1, mode: 0o644 })
  files.delete('b.txt')
  files.set({ path: 'c', kind: 'dir', size: 0, mtimeMs: 1, mode: 0o755 })
  t.same(paths(), ['a:dir', 'a/1.txt:3', 'a/2.txt:7', 'a/0.txt:9', 'c:dir'])
  t.equal(files.get('b.txt'), undefined)
  t.equal(files.get('a/2.txt')?.size, 7)
  t.equal(files.current(files.walked.get('a/2.txt')!)?.size, 7, 'current: the session\'s entry over the walk\'s')
  t.equal(files.current(files.walked.get('b.txt')!), undefined, 'current: none once removed')
  t.equal(files.walked.get('b.txt')?.size, 3, 'the walk itself unchanged')
  files.delete('a/0.txt')
  files.set({ path: 'b.txt', kind: 'file', size: 1, mtimeMs: 1, mode: 0o644 })
  t.same(paths(), ['a:dir', 'a/1.txt:3', 'a/2.txt:7', 'b.txt:1', 'c:dir'], 'set again where the walk had it: in the walk\'s place')
})
