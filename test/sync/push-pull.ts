import t from 'tap'
import { chmod, mkdir, readdir, readFile, rename, symlink, utimes, writeFile, appendFile, copyFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pull, push } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, describeTree, mtimeMismatches, startServer } from '../support/sync.js'
import { serveOver, TRANSPORTS } from '../support/transports.js'

async function sampleTree(t: Parameters<typeof tempTree>[0]) {
  const root = await tempTree(t, {
    'a.txt': 'hello world\n'.repeat(1000),
    'docs/big.bin': randomBytes(1, 300_000),
    'docs/nested/deep.txt': 'deep\n',
    'empty.txt': '',
  })
  await mkdir(join(root, 'empty-dir'))
  await symlink('docs/big.bin', join(root, 'link-to-big'))
  await chmod(join(root, 'a.txt'), 0o640)
  await utimes(join(root, 'docs/nested/deep.txt'), new Date(1_600_000_000_000), new Date(1_600_000_000_000))
  return root
}

// The important flows run over every transport: WebSocket, and the ssh transport's stdio
// framing through `-e` (a real `dsync serve --stdio` process on the far end).
for (const kind of TRANSPORTS) {
  t.test(`${kind}: push makes the server tree equal: content, mtimes, modes, symlinks, empty dirs`, async (t) => {
    const home = await sampleTree(t)
    const work = await tempTree(t)
    const server = await serveOver(t, kind, work)
    const r = await push(home, server.url, server.opts())
    t.same(await describeTree(work), await describeTree(home))
    t.same(await mtimeMismatches(home, work), [], 'files and dirs keep their mtimes')
    t.equal(r.summary.transferred, 4)
    t.equal(r.summary.errors, 0)
  })

  t.test(`${kind}: pull into a new directory makes it equal to the server tree`, async (t) => {
    const work = await sampleTree(t)
    const dest = join(await tempTree(t), 'new', 'copy')
    const server = await serveOver(t, kind, work)
    const r = await pull(server.url, dest, server.opts())
    t.same(await describeTree(dest), await describeTree(work))
    t.same(await mtimeMismatches(work, dest), [])
    t.equal(r.summary.transferred, 4)
  })

  t.test(`${kind}: --dry-run changes nothing; --delete keeps what was never synced unless --force`, async (t) => {
    const home = await sampleTree(t)
    const work = await tempTree(t, { 'extra.txt': 'only on the server', 'old/stale.txt': 'x' })
    const server = await serveOver(t, kind, work)
    const before = await describeTree(work)
    const dry = await push(home, server.url, server.opts({ dryRun: true, delete: true }))
    t.same(await describeTree(work), before, 'dry run wrote nothing')
    t.match(dry.events.find((e) => e.path === 'extra.txt'), { action: 'kept', message: /never synced/ }, 'dry run says it would keep it')
    const r = await push(home, server.url, server.opts({ delete: true }))
    t.match(r.events.find((e) => e.path === 'old/stale.txt'), { action: 'kept', code: 'CHANGED_ON_RECEIVER' })
    t.equal(await readFile(join(work, 'extra.txt'), 'utf8'), 'only on the server', 'a file the sender never saw is not deleted')
    await push(home, server.url, server.opts({ delete: true, force: true }))
    t.same(await describeTree(work), await describeTree(home), '--force deletes it')
  })

  t.test(`${kind}: with --delete a moved file is renamed here, a copied one copied; an edited rename is a delta from the old path`, async (t) => {
    const text = randomBytes(5, 200_000)
    const home = await tempTree(t, { 'notes/report.bin': text, 'photo.raw': randomBytes(6, 400_000), 'draft.bin': randomBytes(7, 100_000) })
    const work = await tempTree(t)
    const server = await serveOver(t, kind, work)
    await push(home, server.url, server.opts())
    await mkdir(join(home, 'archive'))
    await rename(join(home, 'notes/report.bin'), join(home, 'archive/report-2026.bin')) // moved
    await copyFile(join(home, 'photo.raw'), join(home, 'photo-copy.raw')) // copied
    const draft = await readFile(join(home, 'draft.bin'))
    await rm(join(home, 'draft.bin'))
    await writeFile(join(home, 'draft-v2.bin'), Buffer.concat([draft.subarray(0, 50_000), Buffer.from('new words'), draft.subarray(50_000)])) // renamed + edited
    const r = await push(home, server.url, server.opts({ delete: true }))
    const ev = (p: string) => r.events.find((e) => e.path === p)
    t.match(ev('archive/report-2026.bin'), { action: 'moved', seed: 'notes/report.bin' })
    t.notOk(ev('notes/report.bin'), 'its old path is not reported deleted: it was moved')
    t.match(ev('photo-copy.raw'), { action: 'copy', seed: 'photo.raw' })
    t.match(ev('draft-v2.bin'), { action: 'delta', seed: 'draft.bin' })
    t.ok(r.summary.wireBytesSent < 40_000, `only ${r.summary.wireBytesSent} bytes sent for 700 KB of renamed data`)
    t.same(await describeTree(work), await describeTree(home))
  })
}

t.test('a second push with nothing changed reads nothing and transfers nothing', async (t) => {
  const home = await sampleTree(t)
  // Files written a moment before a scan are "racy" (git's term) and read again next time;
  // a real tree's files are older than that.
  const past = new Date(Date.now() - 60_000)
  for (const f of ['a.txt', 'docs/big.bin', 'empty.txt']) await utimes(join(home, f), past, past)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  const r = await push(home, server.url, clientOpts())
  t.equal(r.summary.transferred, 0)
  t.equal(r.summary.filesRead, 0, 'no file content was read')
  t.equal(r.summary.unchanged, 4)
  t.ok(r.summary.wireBytesSent < 2000, `sent ${r.summary.wireBytesSent} bytes`)
})

t.test('a file merged from two others uses the seed that supplies more of it', async (t) => {
  const a = randomBytes(8, 150_000)
  const b = randomBytes(9, 150_000)
  const home = await tempTree(t, { 'a.bin': a, 'b.bin': b })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await writeFile(join(home, 'merged.bin'), Buffer.concat([a.subarray(0, 40_000), b.subarray(0, 110_000)]))
  const r = await push(home, server.url, clientOpts())
  t.match(r.events.find((e) => e.path === 'merged.bin'), { action: 'delta', seed: 'b.bin' })
  t.same(await describeTree(work), await describeTree(home))
})

t.test('a log append and an edit in place are small deltas', async (t) => {
  const home = await tempTree(t, { 'app.log': randomBytes(10, 500_000) })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await appendFile(join(home, 'app.log'), randomBytes(11, 1000))
  const r = await push(home, server.url, clientOpts())
  t.match(r.events.find((e) => e.path === 'app.log'), { action: 'delta', seed: 'app.log' })
  t.ok(r.summary.wireBytesSent < 20_000, `sent ${r.summary.wireBytesSent}`)
  t.same(await describeTree(work), await describeTree(home))
})

t.test('the quick check trusts size and mtime; --checksum compares contents', async (t) => {
  const past = new Date(Date.now() - 60_000)
  const home = await tempTree(t, { 'same-size.txt': 'version one' })
  await utimes(join(home, 'same-size.txt'), past, past)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await writeFile(join(home, 'same-size.txt'), 'version two') // same length, and the old time back:
  await utimes(join(home, 'same-size.txt'), past, past)
  const quick = await push(home, server.url, clientOpts({ checksum: false }))
  t.equal(quick.summary.transferred, 0, 'same size and mtime: taken as unchanged, like rsync')
  t.equal(await readFile(join(work, 'same-size.txt'), 'utf8'), 'version one')
  const full = await push(home, server.url, clientOpts({ checksum: true }))
  t.equal(full.summary.transferred, 1, '--checksum finds the change')
  t.equal(await readFile(join(work, 'same-size.txt'), 'utf8'), 'version two')
})

t.test('small text files with a few edits go as deltas from the same path, not whole', async (t) => {
  const words = (seed: number) => Buffer.from(Array.from(randomBytes(seed, 20_000), (b) => 'abcdefghij klmnop\n'.charCodeAt(b % 18)))
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < 10; i++) files[`notes/n${i}.txt`] = words(700 + i)
  const home = await tempTree(t, files)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  for (let i = 0; i < 10; i++) {
    const text = Buffer.from(files[`notes/n${i}.txt`]!)
    for (const at of [3000, 9000, 15000]) text.write('EDITED', at)
    await writeFile(join(home, `notes/n${i}.txt`), text)
  }
  const r = await push(home, server.url, clientOpts())
  t.equal(r.events.filter((e) => e.action === 'delta').length, 10, 'every edited file is a delta')
  t.ok(r.summary.wireBytesSent < 15_000, `sent ${r.summary.wireBytesSent} bytes for 10 edited 20 KB files`)
  t.same(await describeTree(work), await describeTree(home))
})

t.test('a large file sends a sampled chunk list: an insertion near the start costs a few KiB', async (t) => {
  const big = randomBytes(800, 6 << 20)
  const home = await tempTree(t, { 'big.bin': big })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await writeFile(join(home, 'big.bin'), Buffer.concat([big.subarray(0, 5000), Buffer.from('inserted!'), big.subarray(5000)]))
  const r = await push(home, server.url, clientOpts())
  t.match(r.events.find((e) => e.path === 'big.bin'), { action: 'delta', seed: 'big.bin' })
  // A full list alone would be ~15 KiB (770 chunks × 20 B); the sample is about an eighth, and
  // the rest is one block of literal (~5 KiB of random bytes) around the insertion.
  t.ok(r.summary.wireBytesSent < 12_000, `sent ${r.summary.wireBytesSent} bytes`)
  t.same(await describeTree(work), await describeTree(home))
  const again = await push(home, server.url, clientOpts())
  t.equal(again.summary.transferred, 0, 'the receiver recorded the file it wrote (its own full chunk list)')
})

t.test('a small file moved to another folder and edited is a delta from its old path (same name)', async (t) => {
  const text = Buffer.from(Array.from(randomBytes(900, 20_000), (b) => 'abcdefghij klmnop\n'.charCodeAt(b % 18)))
  const home = await tempTree(t, { 'drafts/plan.md': text })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  const edited = Buffer.from(text)
  for (const at of [2000, 9000, 16000]) edited.write('EDITED', at)
  await rm(join(home, 'drafts/plan.md'))
  await mkdir(join(home, 'final'))
  await writeFile(join(home, 'final/plan.md'), edited)
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === 'final/plan.md'), { action: 'delta', seed: 'drafts/plan.md' })
  t.same(await describeTree(work), await describeTree(home))
})

t.test('a small file moved and edited is a delta from the file of the same name, though another file here shares a chunk with it', async (t) => {
  const text = Buffer.from(Array.from(randomBytes(901, 20_000), (b) => 'abcdefghij klmnop\n'.charCodeAt(b % 18)))
  const common = randomBytes(902, 12_000)
  const home = await tempTree(t, { 'drafts/plan.md': text, 'lib/common.bin': common })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  // Edits every 4 KB leave no chunk of the old text whole; the 12 KB put first shares its first
  // chunk with lib/common.bin, which is below the threshold as a seed (dice ~0.4).
  const edited = Buffer.from(text)
  for (let at = 1000; at < 20_000; at += 4000) edited.write('EDITED', at)
  await rm(join(home, 'drafts/plan.md'))
  await mkdir(join(home, 'final'))
  await writeFile(join(home, 'final/plan.md'), Buffer.concat([common, edited]))
  const r = await push(home, server.url, clientOpts({ delete: true }))
  const e = r.events.find((e) => e.path === 'final/plan.md')
  t.ok(e?.candidates?.some((c) => c.path === 'lib/common.bin'), 'the index found the file that shares a chunk')
  t.match(e, { action: 'delta', seed: 'drafts/plan.md', message: /same name/ })
  t.same(await describeTree(work), await describeTree(home))
})

t.test('a small file renamed in its folder and edited is a delta from its old name, not from a sibling the sender still has', async (t) => {
  const text = (seed: number): Buffer => Buffer.from(Array.from(randomBytes(seed, 20_000), (b) => 'abcdefghij klmnop\n'.charCodeAt(b % 18)))
  const home = await tempTree(t, { 'notes/n006.txt': text(911), 'notes/n006-v1.txt': text(912), 'notes/n002.txt': text(913) })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  // Edits every 4 KB leave none of its chunks whole. By name alone n006-v1 is nearer (1 edit,
  // not 3), but the sender lists it: it was not renamed.
  const edited = text(911)
  for (let at = 1000; at < 20_000; at += 4000) edited.write('EDITED', at)
  await rm(join(home, 'notes/n006.txt'))
  await writeFile(join(home, 'notes/n006-v2.txt'), edited)
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === 'notes/n006-v2.txt'), { action: 'delta', seed: 'notes/n006.txt', message: /similar name/ })
  t.ok(r.summary.wireBytesSent < 6_000, `sent ${r.summary.wireBytesSent} bytes for a 20 KB file with 5 edits`)
  t.same(await describeTree(work), await describeTree(home))
})

t.test('a new small file is no delta from a file of its name (or one it holds) that the sender still has: that one was not moved', async (t) => {
  const text = (seed: number): Buffer => Buffer.from(Array.from(randomBytes(seed, 20_000), (b) => 'abcdefghij klmnop\n'.charCodeAt(b % 18)))
  const home = await tempTree(t, { 'a/README.md': text(921), 'b/notes.md': text(922) })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await mkdir(join(home, 'c'))
  await writeFile(join(home, 'c/README.md'), text(923))
  await writeFile(join(home, 'b/notes-2.md'), text(924))
  const r = await push(home, server.url, clientOpts({ delete: true }))
  t.match(r.events.find((e) => e.path === 'c/README.md'), { action: 'new' }, 'not a delta from a/README.md')
  t.match(r.events.find((e) => e.path === 'b/notes-2.md'), { action: 'new' }, 'not a delta from b/notes.md')
  t.same(await describeTree(work), await describeTree(home))
})

t.test('--exclude and .dsyncignore: excluded paths are neither sent nor deleted on the receiver', async (t) => {
  const home = await tempTree(t, { 'keep.txt': 'sent', 'build/out.o': 'not sent', 'cache.tmp': 'not sent', '.dsyncignore': '*.tmp\n' })
  const work = await tempTree(t, { 'build/local.o': 'the receiver own build', 'old.tmp': 'ignored here too' })
  const server = await startServer(t, work)
  const r = await push(home, server.url, clientOpts({ exclude: ['build/'], delete: true }))
  t.equal(r.summary.errors, 0)
  t.equal(await readFile(join(work, 'keep.txt'), 'utf8'), 'sent')
  t.equal(await readFile(join(work, 'build/local.o'), 'utf8'), 'the receiver own build', '--delete spares what --exclude names')
  t.equal(await readFile(join(work, 'old.tmp'), 'utf8'), 'ignored here too', '--delete spares what .dsyncignore names')
  await t.rejects(readFile(join(work, 'build/out.o')), { code: 'ENOENT' })
  await t.rejects(readFile(join(work, 'cache.tmp')), { code: 'ENOENT' })
})

t.test('--delete of many files (removed 32 at a time, then their folders): all gone and forgotten, a file changed here kept with its folder, one report each', async (t) => {
  const files: Record<string, string> = { 'keep.txt': 'stays' }
  for (let i = 0; i < 80; i++) files[`old/d${i % 5}/f${i}.txt`] = `file ${i}`
  const home = await tempTree(t, files)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await rm(join(home, 'old'), { recursive: true })
  await writeFile(join(work, 'old/d3/f3.txt'), 'changed on the receiver')
  const r = await push(home, server.url, clientOpts({ delete: true }))
  const deleted = r.events.filter((e) => e.action === 'deleted').map((e) => e.path)
  t.equal(deleted.filter((p) => p.endsWith('.txt')).length, 79, 'every unchanged file deleted')
  t.equal(new Set(deleted).size, deleted.length, 'one report each')
  t.same(deleted.filter((p) => !p.endsWith('.txt')).sort(), ['old/d0', 'old/d1', 'old/d2', 'old/d4'], 'the folders emptied, after their files; not old/d3 nor old')
  t.match(r.events.filter((e) => e.path === 'old/d3/f3.txt'), [{ action: 'kept', code: 'CHANGED_ON_RECEIVER' }])
  t.same(await readdir(join(work, 'old')), ['d3'])
  t.same(await readdir(join(work, 'old/d3')), ['f3.txt'])
  t.same(r.events.filter((e) => e.action === 'error'), [])
  const again = await push(home, server.url, clientOpts({ delete: true }))
  t.same(again.events.filter((e) => e.action === 'deleted'), [], 'nothing left to delete: the store forgot them')
})
