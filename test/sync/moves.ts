/**
 * Files the sender moved or renamed, renamed on the receiver (PROTOCOL.md §4.14): with
 * --delete, a new path whose content is here under a path the sender no longer has is that
 * file renamed, not a copy of it; otherwise, or when the old file may not go, a copy as before.
 */
import t from 'tap'
import { link, mkdir, readFile, rename, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { stableUtime } from '../../src/fs/file-time.js'
import { Store } from '../../src/store/index.js'
import { pull, push, SYNC_CHUNK_PARAMS } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, describeTree, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const inode = async (path: string): Promise<number> => (await stat(path)).ino

/** home and work after a first push of `files` to a real server on work. */
async function synced(t: Parameters<typeof tempTree>[0], files: Record<string, Uint8Array>, versions?: readonly number[]) {
  const home = await tempTree(t, files)
  const work = await tempTree(t)
  const server = await startServer(t, work, versions === undefined ? {} : { versions })
  await push(home, server.url, clientOpts())
  return { home, work, server }
}

t.test('with --delete, moved and renamed files are renamed here: the same inode, the old paths gone, no data', async (t) => {
  const files = { 'a.bin': randomBytes(1, 300_000), 'docs/b.txt': randomBytes(2, 50_000), 'docs/c.txt': randomBytes(3, 20_000) }
  const { home, work, server } = await synced(t, files)
  const before = { a: await inode(join(work, 'a.bin')), b: await inode(join(work, 'docs/b.txt')) }
  await mkdir(join(home, 'archive'))
  await rename(join(home, 'a.bin'), join(home, 'archive/a-2026.bin')) // moved
  await rename(join(home, 'docs/b.txt'), join(home, 'docs/b-renamed.txt')) // renamed in its folder
  const r = await push(home, server.url, clientOpts({ delete: true }))
  const ev = (p: string) => r.events.find((e) => e.path === p)
  t.match(ev('archive/a-2026.bin'), { action: 'moved', seed: 'a.bin' })
  t.match(ev('docs/b-renamed.txt'), { action: 'moved', seed: 'docs/b.txt' })
  t.notOk(ev('a.bin'), 'no "deleted" for an old path: the file was moved')
  t.equal(await inode(join(work, 'archive/a-2026.bin')), before.a, 'the receiver\'s own file, renamed: not a copy')
  t.equal(await inode(join(work, 'docs/b-renamed.txt')), before.b)
  t.match(r.summary, { moved: 2, copied: 0, transferred: 0, deleted: 0, errors: 0, literalBytes: 0 })
  t.same(await describeTree(work), await describeTree(home), 'the trees are the same')
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.equal(store.getBase('a.bin'), undefined, 'the old path is forgotten')
  t.equal(store.get('a.bin'), undefined)
  t.match(store.getBase('archive/a-2026.bin'), { size: 300_000 }, 'the new path has its base')
  await store.close()
  // The store followed: a push with nothing changed finds it all unchanged, nothing to delete.
  const again = await push(home, server.url, clientOpts({ delete: true }))
  t.match(again.summary, { transferred: 0, copied: 0, moved: 0, deleted: 0, unchanged: 3 })
})

t.test('without --delete the old path stays: a moved file is copied, with its own inode', async (t) => {
  const { home, work, server } = await synced(t, { 'a.bin': randomBytes(4, 200_000) })
  await rename(join(home, 'a.bin'), join(home, 'b.bin'))
  const r = await push(home, server.url, clientOpts())
  t.match(r.events.find((e) => e.path === 'b.bin'), { action: 'copy', seed: 'a.bin' })
  t.not(await inode(join(work, 'b.bin')), await inode(join(work, 'a.bin')))
  t.ok((await readFile(join(work, 'a.bin'))).equals(await readFile(join(home, 'b.bin'))), 'both paths hold the content')
})

t.test('a dry run renames nothing and says what it would copy', async (t) => {
  const { home, work, server } = await synced(t, { 'a.bin': randomBytes(5, 100_000) })
  await rename(join(home, 'a.bin'), join(home, 'b.bin'))
  const before = await describeTree(work)
  const r = await push(home, server.url, clientOpts({ delete: true, dryRun: true }))
  t.same(await describeTree(work), before, 'nothing changed')
  t.match(r.events.find((e) => e.path === 'b.bin'), { action: 'copy', seed: 'a.bin' })
})

t.test('a server of version 10 copies and deletes: its client would not count a move', async (t) => {
  const { home, work, server } = await synced(t, { 'a.bin': randomBytes(6, 100_000) }, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1])
  await rename(join(home, 'a.bin'), join(home, 'b.bin'))
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === 'b.bin'), { action: 'copy', seed: 'a.bin' })
  t.match(r.events.find((e) => e.path === 'a.bin'), { action: 'deleted' })
  t.same(await describeTree(work), await describeTree(home))
})

t.test('a file here that --delete would keep is not renamed away: created on this side, the new path is a copy of it', async (t) => {
  const content = randomBytes(7, 100_000)
  const { home, work, server } = await synced(t, { 'a.txt': randomBytes(11, 1000) })
  await writeFile(join(work, 'local.bin'), content) // never synced from the sender
  await writeFile(join(home, 'b.bin'), content)
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === 'b.bin'), { action: 'copy', seed: 'local.bin' })
  t.ok((await readFile(join(work, 'b.bin'))).equals(content), 'the new path has the content')
  t.ok((await readFile(join(work, 'local.bin'))).equals(content), 'the file made here is still there')
  t.match(r.events.find((e) => e.path === 'local.bin'), { action: 'kept', code: 'CHANGED_ON_RECEIVER' })
})

t.test('an old file with a second name is copied, not renamed: the other name keeps its own future', async (t) => {
  const { home, work, server } = await synced(t, { 'a.bin': randomBytes(12, 100_000) })
  const elsewhere = join(await tempTree(t), 'other-name.bin')
  await link(join(work, 'a.bin'), elsewhere) // outside the tree: dsync never sees it
  await rename(join(home, 'a.bin'), join(home, 'b.bin'))
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === 'b.bin'), { action: 'copy', seed: 'a.bin' })
  t.match(r.events.find((e) => e.path === 'a.bin'), { action: 'deleted' })
  t.not(await inode(join(work, 'b.bin')), await inode(elsewhere), 'the new path is a file of its own')
  t.same(await describeTree(work), await describeTree(home))
})

t.test('a file renamed while another new file is planned against it as a seed: both come out right', async (t) => {
  const base = randomBytes(8, 600_000)
  const edited = Buffer.concat([base.subarray(0, 300_000), randomBytes(9, 3000), base.subarray(300_000)])
  const { home, work, server } = await synced(t, { 'a.bin': base })
  await mkdir(join(home, 'moved'))
  await rename(join(home, 'a.bin'), join(home, 'moved/a.bin'))
  await writeFile(join(home, 'edited.bin'), edited)
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.equal(r.summary.errors, 0, JSON.stringify(r.events.filter((e) => e.action === 'error')))
  // Renamed, or copied when the rename would have pulled the seed from under the delta.
  t.match(r.events.find((e) => e.path === 'moved/a.bin'), { action: /^(moved|copy)$/, seed: 'a.bin' })
  t.same(await describeTree(work), await describeTree(home))
  t.ok(r.summary.wireBytesSent < 100_000, `${r.summary.wireBytesSent} bytes sent: the edited file came as a delta`)
})

t.test('a pull renames too: the client is the receiver', async (t) => {
  const files = { 'a.bin': randomBytes(10, 200_000) }
  const work = await tempTree(t, files)
  const home = await tempTree(t)
  const server = await startServer(t, work)
  await pull(server.url, home, clientOpts())
  const was = await inode(join(home, 'a.bin'))
  await mkdir(join(work, 'x'))
  await rename(join(work, 'a.bin'), join(work, 'x/a.bin'))
  const r = await pull(server.url, home, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === 'x/a.bin'), { action: 'moved', seed: 'a.bin' })
  t.equal(await inode(join(home, 'x/a.bin')), was)
  t.same(await describeTree(home), await describeTree(work))
})

t.test("the old file's record, when it holds (size and mtime, not racy), stands for its digest: no read, as the quick check; when it does not hold, the file is read", async (t) => {
  // Files last changed an hour ago: their records are not racy (read long after their mtime).
  const old = new Date(Date.now() - 3600_000)
  const files = { 'a.bin': randomBytes(8, 100_000), 'b.bin': randomBytes(9, 100_000) }
  const home = await tempTree(t, files)
  for (const p of Object.keys(files)) await utimes(join(home, p), old, old)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  // Behind the store's back, both old files change on this side, with the same size; a.bin
  // keeps its mtime (so its record still holds), b.bin gets a new one.
  const changed = (i: number) => Buffer.from(randomBytes(100 + i, 100_000))
  const was = await stat(join(work, 'a.bin'))
  await writeFile(join(work, 'a.bin'), changed(1))
  await utimes(join(work, 'a.bin'), was.atime, stableUtime(was.mtimeMs))
  t.equal((await stat(join(work, 'a.bin'))).mtimeMs, was.mtimeMs, "a.bin's mtime as it was")
  await writeFile(join(work, 'b.bin'), changed(2))
  const inodes = { a: await inode(join(work, 'a.bin')), b: await inode(join(work, 'b.bin')) }
  await rename(join(home, 'a.bin'), join(home, 'a-moved.bin'))
  await rename(join(home, 'b.bin'), join(home, 'b-moved.bin'))
  const r = await push(home, server.url, clientOpts({ delete: true }))
  const ev = (p: string) => r.events.find((e) => e.path === p)
  t.match(ev('a-moved.bin'), { action: 'moved', seed: 'a.bin' }, "a.bin's record held: renamed unread")
  t.equal(await inode(join(work, 'a-moved.bin')), inodes.a)
  t.ok((await readFile(join(work, 'a-moved.bin'))).equals(changed(1)), 'with the bytes it had here: the quick check trusts size and mtime, as rsync does')
  t.not(ev('b-moved.bin')?.action, 'moved', "b.bin's did not: read, it is not the file listed, so not renamed")
  t.ok((await readFile(join(work, 'b-moved.bin'))).equals(Buffer.from(files['b.bin'])), 'b-moved.bin has the listed content')
})
