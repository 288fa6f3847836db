import { chmod, rm, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { chunkParams } from '../../src/index.js'
import { Store, scanTree } from '../../src/store/index.js'
import type { DsyncError } from '../../src/errors.js'
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

t.test('first scan reads everything; a second reads nothing; after one edit it reads that one', async (t) => {
  const files = { 'a.txt': 'alpha', 'd/b.bin': randomBytes(1, 5000), 'd/e/c.txt': 'gamma' }
  const { root, store } = await setup(t, files)
  const read: string[] = []
  let r = await scanTree(root, store, { params, onFile: (p) => read.push(p) })
  t.equal(r.filesRead, 3)
  t.equal(r.bytesRead, 5010)
  t.same(read, ['a.txt', 'd/b.bin', 'd/e/c.txt'])
  t.same(r.entries.map((e) => e.path), ['a.txt', 'd', 'd/b.bin', 'd/e', 'd/e/c.txt'])
  t.same(store.get('d/b.bin')?.size, 5000)

  r = await scanTree(root, store, { params })
  t.equal(r.filesRead, 0, 'the no-op scan reads no file')
  t.equal(r.bytesRead, 0)
  t.match(r.entries.find((e) => e.path === 'd/b.bin'), { kind: 'file', record: { size: 5000 } })
  t.equal(r.entries.find((e) => e.path === 'd')?.record, undefined)

  await writeFile(join(root, 'd/e/c.txt'), 'GAMMA') // same size: only the mtime tells
  await age(root, ['d/e/c.txt'], 60)
  read.length = 0
  r = await scanTree(root, store, { params, onFile: (p) => read.push(p) })
  t.equal(r.filesRead, 1)
  t.same(read, ['d/e/c.txt'])
  t.equal(store.findByDigest(r.entries.find((e) => e.path === 'd/e/c.txt')!.record!.digest)[0], 'd/e/c.txt')
})

t.test('vanished and newly excluded files lose their records; new files gain one', async (t) => {
  const { root, store } = await setup(t, { 'keep.txt': 'k', 'gone.txt': 'g', 'x.log': 'l' })
  await scanTree(root, store, { params })
  t.same(store.recordPaths().sort(), ['gone.txt', 'keep.txt', 'x.log'])
  await rm(join(root, 'gone.txt'))
  await writeFile(join(root, 'new.txt'), 'n')
  await age(root, ['new.txt'])
  const r = await scanTree(root, store, { params, exclude: ['*.log'] })
  t.equal(r.filesRead, 1)
  t.same(store.recordPaths().sort(), ['keep.txt', 'new.txt'])
})

t.test('checksum mode reads every file even when size and mtime match', async (t) => {
  const { root, store } = await setup(t, { a: 'a', b: 'bb' })
  await scanTree(root, store, { params })
  const r = await scanTree(root, store, { params, checksum: true })
  t.equal(r.filesRead, 2)
})

t.test('a mode change updates the record without reading the file', async (t) => {
  const { root, store } = await setup(t, { 'run.sh': '#!/bin/sh\n' })
  await scanTree(root, store, { params })
  await chmod(join(root, 'run.sh'), 0o755)
  const r = await scanTree(root, store, { params })
  t.equal(r.filesRead, 0)
  t.equal(store.get('run.sh')?.mode, 0o755)
  t.equal(r.entries[0]?.record?.mode, 0o755)
})

t.test('a file read within the racy window is read again next time, then trusted', async (t) => {
  const root = await tempTree(t, { 'hot.txt': 'v1' })
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const now = Date.now() / 1000
  await utimes(join(root, 'hot.txt'), now, now + 0.5) // an mtime "now": a same-tick edit could follow
  t.equal((await scanTree(root, store, { params })).filesRead, 1)
  t.equal((await scanTree(root, store, { params })).filesRead, 1, 'racy: not trusted yet')
  await age(root, ['hot.txt'])
  t.equal((await scanTree(root, store, { params })).filesRead, 1, 'mtime changed: read')
  t.equal((await scanTree(root, store, { params })).filesRead, 0, 'old enough: trusted')
})

t.test('changed params make the next scan re-read everything', async (t) => {
  const { root, store } = await setup(t, { a: randomBytes(2, 3000) })
  await scanTree(root, store, { params })
  await store.close()
  const other = chunkParams({ avg: 1024 })
  const s2 = await Store.open(root, { params: other })
  t.teardown(() => s2.close())
  t.equal((await scanTree(root, s2, { params: other })).filesRead, 1)
})

t.test('an unreadable file is reported through onError and left out; ABORTED stops the scan', async (t) => {
  const { root, store } = await setup(t, { 'ok.txt': 'fine', 'bad\\name': 'x' })
  const errors: DsyncError[] = []
  const r = await scanTree(root, store, { params, onError: (e) => errors.push(e) })
  t.same(r.entries.map((e) => e.path), ['ok.txt'])
  t.match(errors, [{ code: 'UNSAFE_PATH' }])
  const ac = new AbortController()
  ac.abort()
  await t.rejects(scanTree(root, store, { params, signal: ac.signal, checksum: true }), { code: 'ABORTED' })
})

t.test('small files chunked in memory get the same record as the streaming chunker gives', async (t) => {
  const { chunkPath } = await import('../../src/fs/index.js')
  const sizes = [0, 1, 255, 4096, 100_000, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024]
  const files = Object.fromEntries(sizes.map((n, i) => [`f${n}`, randomBytes(20 + i, n)]))
  const { root, store } = await setup(t, files)
  const r = await scanTree(root, store, { params })
  for (const n of sizes) {
    const want = await chunkPath(join(root, `f${n}`), params)
    t.match(r.entries.find((e) => e.path === `f${n}`)?.record, { size: want.size, digest: want.digest, chunks: want.chunks }, `${n} bytes`)
  }
})
