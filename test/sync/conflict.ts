import t from 'tap'
import { rm, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { push, checkOverwrite, conflictCopyPath } from '../../src/sync/index.js'
import { isConflictCopy } from '../../src/sync/conflict.js'
import type { FileDigest } from '../../src/types.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, startServer } from '../support/sync.js'
import { readFile, readdir } from 'node:fs/promises'

const D = (c: string) => c.repeat(64) as FileDigest

t.test('checkOverwrite: the base decides who changed the file', async (t) => {
  const v = (c: string, mtimeMs: number) => ({ size: 10, mtimeMs, digest: D(c) })
  const f = { force: false }
  t.equal(checkOverwrite({ ...f, current: v('a', 2), incoming: v('b', 1), base: { digest: D('a') } }), 'write', 'receiver unchanged since sync')
  t.equal(checkOverwrite({ ...f, current: v('c', 2), incoming: v('a', 1), base: { digest: D('a') } }), 'kept', 'only the receiver changed')
  t.equal(checkOverwrite({ ...f, current: v('c', 2), incoming: v('b', 1), base: { digest: D('a') } }), 'conflict', 'both changed')
  t.equal(checkOverwrite({ ...f, current: v('c', 2), incoming: v('b', 1), base: undefined }), 'conflict', 'never synced, receiver newer')
  t.equal(checkOverwrite({ ...f, current: v('c', 0), incoming: v('b', 1), base: undefined }), 'write', 'never synced, sender newer')
  t.equal(checkOverwrite({ ...f, current: v('c', 2), incoming: v('b', 1), base: { digest: D('a') }, force: true }), 'write', '--force')
})

t.test('checkOverwrite: a base of size and mtime alone (first sync by quick check) compares by them', async (t) => {
  const base = { size: 10, mtimeMs: 1000 }
  const f = { force: false, base }
  const same = { size: 10, mtimeMs: 1000.4, digest: D('a') }
  const edited = { size: 11, mtimeMs: 2000, digest: D('c') }
  const other = { size: 10, mtimeMs: 3000, digest: D('b') }
  t.equal(checkOverwrite({ ...f, current: same, incoming: other }), 'write', 'receiver still at the base (same size and mtime to the ms)')
  t.equal(checkOverwrite({ ...f, current: edited, incoming: same }), 'kept', 'sender still at the base')
  t.equal(checkOverwrite({ ...f, current: edited, incoming: other }), 'conflict', 'both moved on')
  t.equal(checkOverwrite({ ...f, current: { size: 10, mtimeMs: 1000, digest: D('c') }, incoming: other, base: { ...base, digest: D('a') } }), 'conflict',
    'with a digest in the base, content decides: same size and mtime but other content is a change')
})

t.test('conflictCopyPath keeps the extension and the folder', async (t) => {
  const now = new Date('2026-11-21T14:30:00Z')
  t.equal(conflictCopyPath('notes/plan.txt', now), 'notes/plan.dsync-conflict-20261121-143000.txt')
  t.equal(conflictCopyPath('Makefile', now), 'Makefile.dsync-conflict-20261121-143000')
  t.ok(isConflictCopy(conflictCopyPath('notes/plan.txt', now)) && isConflictCopy(conflictCopyPath('Makefile', now)), 'its names are recognized')
  t.notOk(isConflictCopy('notes/plan.txt'))
  t.notOk(isConflictCopy('a.dsync-conflict-20261121-143000/plan.txt'), 'only the name, not a folder')
})

t.test('--delete keeps conflict copies and files the sender never saw; --force deletes them', async (t) => {
  const home = await tempTree(t, { 'both.txt': 'v1', 'gone.txt': 'synced once' })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await writeFile(join(work, 'both.txt'), 'edited at work')
  await writeFile(join(work, 'created-at-work.txt'), 'never synced')
  await writeFile(join(home, 'both.txt'), 'edited at home')
  await utimes(join(home, 'both.txt'), new Date(), new Date(Date.now() + 5000))
  const first = await push(home, server.url, clientOpts())
  const copy = first.events.find((e) => e.path === 'both.txt')!.conflictCopy!
  await rm(join(home, 'gone.txt'))
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === copy), { action: 'kept', message: /conflict copy/ })
  t.match(r.events.find((e) => e.path === 'created-at-work.txt'), { action: 'kept', message: /never synced/ })
  t.match(r.events.find((e) => e.path === 'gone.txt'), { action: 'deleted' }, 'a file deleted by the sender, unchanged here, goes')
  t.equal(await readFile(join(work, copy), 'utf8'), 'edited at work')
  await push(home, server.url, clientOpts({ delete: true, force: true }))
  t.same((await readdir(work)).filter((n) => n !== '.dsync'), ['both.txt'])
})

t.test('a file changed on both sides is kept as a conflict copy; changed only on the receiver, it is not overwritten', async (t) => {
  const home = await tempTree(t, { 'both.txt': 'v1 both', 'theirs.txt': 'v1 theirs' })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await writeFile(join(work, 'both.txt'), 'edited at work')
  await writeFile(join(work, 'theirs.txt'), 'edited at work only')
  await writeFile(join(home, 'both.txt'), 'edited at home')
  await utimes(join(home, 'both.txt'), new Date(), new Date(Date.now() + 5000))
  const r = await push(home, server.url, clientOpts())
  const both = r.events.find((e) => e.path === 'both.txt')!
  t.equal(both.action, 'conflict')
  t.equal(await readFile(join(work, 'both.txt'), 'utf8'), 'edited at home')
  t.equal(await readFile(join(work, both.conflictCopy!), 'utf8'), 'edited at work', 'the receiver version is not lost')
  t.match(r.events.find((e) => e.path === 'theirs.txt'), { action: 'kept', code: 'CHANGED_ON_RECEIVER' })
  t.equal(await readFile(join(work, 'theirs.txt'), 'utf8'), 'edited at work only')
  t.ok((await readdir(work)).some((n) => n.startsWith('both.dsync-conflict-')))
  const forced = await push(home, server.url, clientOpts({ force: true }))
  t.ok(forced.events.some((e) => e.path === 'theirs.txt' && (e.action === 'whole' || e.action === 'delta' || e.action === 'new')))
  t.equal(await readFile(join(work, 'theirs.txt'), 'utf8'), 'v1 theirs')
})
