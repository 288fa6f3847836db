import t, { type Test } from 'tap'
import { appendFile, cp, readdir, readFile, rename, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pull, push } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, describeTree, startServer } from '../support/sync.js'

// Issue 8: a first sync is a quick check too. Trees that already match (copied with cp -a or
// rsync, no dsync state on either side) are compared by size and mtime; no file is read. The
// receiver reads its file at a changed path (its seed) and the rest of its tree only when a file
// needs a seed found by content.

const PAST = new Date(Date.now() - 3_600_000)

/** Twelve files of a few KiB to 300 KB, an hour old (out of the racy window). */
async function homeTree(t: Test): Promise<string> {
  const files: Record<string, Uint8Array | string> = {}
  for (let i = 0; i < 10; i++) files[`src/f${i}.txt`] = `file ${i}\n`.repeat(300 + i * 40)
  files['big/data.bin'] = randomBytes(3, 300_000)
  files['big/other.bin'] = randomBytes(4, 200_000)
  const root = await tempTree(t, files)
  for (const p of Object.keys(files)) await utimes(join(root, p), PAST, PAST)
  return root
}

/** `cp -a`: same content, sizes, modes and mtimes; no .dsync state. */
async function copyOf(t: Test, root: string): Promise<string> {
  const dest = join(await tempTree(t), 'copy')
  await cp(root, dest, { recursive: true, preserveTimestamps: true })
  return dest
}

t.test('push between two matching trees without state reads no file and sends only the list', async (t) => {
  const home = await homeTree(t)
  const work = await copyOf(t, home)
  const server = await startServer(t, work)
  const r = await push(home, server.url, clientOpts())
  t.equal(r.summary.transferred, 0)
  t.equal(r.summary.unchanged, 12)
  t.equal(r.summary.filesRead, 0, 'the sender read no file')
  t.ok(r.summary.wireBytesSent < 2000, `${r.summary.wireBytesSent} bytes sent`)
})

t.test('pull between matching trees reads nothing; then one edit reads only its own file', async (t) => {
  const work = await homeTree(t)
  const home = await copyOf(t, work)
  const server = await startServer(t, work)
  let r = await pull(server.url, home, clientOpts())
  t.equal(r.summary.filesRead, 0, 'the receiver read no file')
  t.equal(r.summary.transferred, 0)

  await appendFile(join(work, 'src/f3.txt'), 'one more line\n')
  r = await pull(server.url, home, clientOpts())
  const f3 = r.events.find((e) => e.path === 'src/f3.txt')
  t.equal(f3?.action, 'delta', 'a delta against the file at the same path')
  t.equal(r.summary.filesRead, 1, 'only the seed was read on the receiver, not the rest of its tree')
  t.same(await describeTree(home), await describeTree(work))
})

t.test('a file renamed on the sender is found by content in a receiver that never indexed its tree', async (t) => {
  const work = await homeTree(t)
  const home = await copyOf(t, work)
  const server = await startServer(t, work)
  t.equal((await pull(server.url, home, clientOpts())).summary.filesRead, 0, 'the first pull indexed nothing')
  await rename(join(work, 'big/data.bin'), join(work, 'big/renamed.bin'))
  const r = await pull(server.url, home, clientOpts({ delete: true }))
  const moved = r.events.find((e) => e.path === 'big/renamed.bin')
  t.equal(moved?.action, 'moved', 'renamed from big/data.bin on this side (--delete)')
  t.equal(moved?.seed, 'big/data.bin')
  t.notOk(r.events.find((e) => e.path === 'big/data.bin'), 'the old name went with the rename: its base (size and mtime) says it is unchanged')
  t.ok(r.summary.wireBytesReceived < 20_000, `${r.summary.wireBytesReceived} bytes received for a 300 KB file`)
  t.same(await describeTree(home), await describeTree(work))
})

t.test('after a first sync by quick check, changes on both sides are a conflict, one side a plain write', async (t) => {
  const work = await homeTree(t)
  const home = await copyOf(t, work)
  const server = await startServer(t, work)
  await pull(server.url, home, clientOpts()) // records bases by size and mtime only
  await writeFile(join(work, 'src/f1.txt'), 'server edit\n')
  await writeFile(join(home, 'src/f1.txt'), 'local edit, longer\n')
  await writeFile(join(work, 'src/f2.txt'), 'server only\n')
  const r = await pull(server.url, home, clientOpts())
  t.equal(r.events.find((e) => e.path === 'src/f1.txt')?.action, 'conflict', 'both moved on from the base')
  t.match(r.events.find((e) => e.path === 'src/f2.txt')?.action, /^(whole|delta)$/, 'only the sender changed it: written')
  t.equal(await readFile(join(home, 'src/f2.txt'), 'utf8'), 'server only\n')
  t.equal(await readFile(join(home, 'src/f1.txt'), 'utf8'), 'server edit\n')
  const copies = (await readdir(join(home, 'src'))).filter((n) => n.includes('dsync-conflict'))
  t.equal(copies.length, 1, 'the local edit is kept as a conflict copy')
  t.equal(await readFile(join(home, 'src', copies[0]!), 'utf8'), 'local edit, longer\n')
})

t.test('a large file the receiver wrote is recorded as it is written: its next change reads nothing more', async (t) => {
  // 3 MB: over 256 chunks, so its chunk list comes as a sample and the receiver cannot keep it
  const work = await tempTree(t, { 'big.bin': randomBytes(7, 3_000_000) })
  await utimes(join(work, 'big.bin'), PAST, PAST)
  const home = await tempTree(t)
  const server = await startServer(t, work)
  let r = await pull(server.url, home, clientOpts())
  t.equal(r.events.find((e) => e.path === 'big.bin')?.action, 'new')
  await appendFile(join(work, 'big.bin'), randomBytes(8, 5000))
  r = await pull(server.url, home, clientOpts())
  t.equal(r.events.find((e) => e.path === 'big.bin')?.action, 'delta')
  t.equal(r.summary.filesRead, 0, 'the seed came from the record made while writing, not from a read')
  t.same(await describeTree(home), await describeTree(work))
})
