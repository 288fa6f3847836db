/**
 * Large files changed in place, planned against the receiver's old version with no chunk list
 * (`want.direct`, PROTOCOL.md §4.12): when it is used and when not, what comes of it, and a
 * sender whose file changes or goes in between.
 */
import t, { type Test } from 'tap'
import { appendFileSync } from 'node:fs'
import { appendFile, readFile, readdir, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { digestBytes } from '../../src/hash/index.js'
import { memoryChannelPair, wrapChannel, type Message, type SessionOptions } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { WINDOWED_PROBE_BYTES } from '../../src/sync/probe.js'
import { within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'

const SIZE = WINDOWED_PROBE_BYTES + 3_000_000
/** A file that goes direct (8 MiB on) and keeps its SHA-256 (under 64 MiB). */
const MID_SIZE = 9 * 1024 * 1024
const old = randomBytes(71, SIZE)

/** `base` with 40 overwrites of 1 KiB spread through it. */
function edited(base: Uint8Array, seed: number): Uint8Array {
  const out = Buffer.from(base)
  const patch = randomBytes(seed, 1024)
  for (let i = 0; i < 40; i++) out.set(patch, Math.floor(((i + 0.5) * (base.length - 1024)) / 40))
  return out
}

interface Pushed {
  /** the receiver's report, and the sender's */
  readonly report: SyncReport
  readonly sent: SyncReport
  /** the messages each side sent */
  readonly fromReceiver: Message[]
  readonly fromSender: Message[]
}

/**
 * Both roles in one process, home → work, each with its store for the push. `onWant` runs
 * before a `want` of the receiver reaches the sender, `onPlan` before a `plan` does.
 */
async function pushOnce(
  home: string,
  work: string,
  opts: { version?: number; options?: Partial<SessionOptions>; onWant?: (m: Extract<Message, { t: 'want' }>) => Promise<void>; onPlan?: () => Promise<void> } = {},
): Promise<Pushed> {
  const [a, b] = memoryChannelPair()
  const fromReceiver: Message[] = []
  const fromSender: Message[] = []
  const sender = wrapChannel(a, {
    send: (msg) => {
      // A data message keeps its first bytes only (a delta's magic and format version).
      fromSender.push(msg.t === 'data' ? { ...msg, bytes: msg.bytes.slice(0, 8) } : msg)
      return a.send(msg)
    },
  })
  const receiver = wrapChannel(b, {
    send: async (msg) => {
      fromReceiver.push(msg)
      if (msg.t === 'want') await opts.onWant?.(msg)
      if (msg.t === 'plan') await opts.onPlan?.()
      return b.send(msg)
    },
  })
  const report = new SyncReport()
  const sent = new SyncReport()
  const signal = new AbortController().signal
  const v = opts.version !== undefined ? { version: opts.version } : {}
  const options = sessionOptions(opts.options)
  const homeStore = await Store.open(home, { params: SYNC_CHUNK_PARAMS })
  const workStore = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  try {
    await within(60_000, 'a push', Promise.all([
      runSender(sender, { root: home, store: homeStore, params: SYNC_CHUNK_PARAMS, options, report: sent, signal, ...v }).then(() => a.close()),
      runReceiver(receiver, { root: work, store: workStore, params: SYNC_CHUNK_PARAMS, options, report, signal, now: () => new Date(), ...v }),
    ]))
  } finally {
    await homeStore.close()
    await workStore.close()
  }
  return { report, sent, fromReceiver, fromSender }
}

/** home, holding `files`, and work after a first push of them (work's bases: their sizes and
 *  mtimes). */
async function pushedTrees(t: Test, files: Record<string, Uint8Array>): Promise<{ home: string; work: string }> {
  const home = await tempTree(t, files)
  const work = await tempTree(t)
  await pushOnce(home, work)
  return { home, work }
}

/** home and work after a first push of `old` as big.bin (work's base: its size and mtime). */
async function synced(t: Test): Promise<{ home: string; work: string }> {
  const { home, work } = await pushedTrees(t, { 'big.bin': old })
  t.ok((await readFile(join(work, 'big.bin'))).equals(old), 'first push: the old version on both sides')
  return { home, work }
}

/** home and work after a first push of a 2 MB file, mid.bin (over 1 MiB: not kept in memory from
 *  its list; under 64 MiB: listed, not direct), then edited at home. */
async function syncedMid(t: Test, seed: number): Promise<{ home: string; work: string; before: Uint8Array }> {
  const before = randomBytes(seed, 2_000_000)
  const { home, work } = await pushedTrees(t, { 'mid.bin': before })
  await writeFile(join(home, 'mid.bin'), edited(before, seed + 1))
  return { home, work, before }
}

/** `fn` on the first call only: a hook that runs once however often its message goes. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let done = false
  return async () => {
    if (done) return
    done = true
    await fn()
  }
}

const wants = (p: Pushed): Extract<Message, { t: 'want' }>[] => p.fromReceiver.filter((m): m is Extract<Message, { t: 'want' }> => m.t === 'want')

/** The delta format versions of the data the sender sent: 2 is checked with XXH3-128 (§4.11). */
const deltaVersions = (p: Pushed): number[] =>
  p.fromSender.filter((m): m is Extract<Message, { t: 'data' }> => m.t === 'data' && m.bytes[0] === 0x64 && m.bytes[1] === 0x73 && m.bytes[2] === 0x44).map((m) => m.bytes[3]!)

t.test('a large file changed in place goes as a delta from its old version with no chunk list, measured by its matches, checked with XXH3-128 and filed by size and mtime', async (t) => {
  const { home, work } = await synced(t)
  const now = edited(old, 72)
  await writeFile(join(home, 'big.bin'), now)
  const p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [true], 'one want, direct')
  t.notOk(p.fromSender.some((m) => m.t === 'chunks' || m.t === 'probe'), 'no chunk list, no probe')
  t.ok(p.fromReceiver.some((m) => m.t === 'plan' && m.refine === true && m.seed === 'big.bin'), 'a refined plan against the old version')
  const e = p.report.events.find((x) => x.path === 'big.bin')
  t.match(e, { action: 'delta', seed: 'big.bin', message: 'measured by matching' })
  t.ok((e?.similarity ?? 0) > 0.99, `similar by its matches (${e?.similarity})`)
  t.ok((e?.literalBytes ?? SIZE) < 200_000, `little literal (${e?.literalBytes} bytes for 40 KiB of edits)`)
  t.match(p.sent.events.find((x) => x.path === 'big.bin'), { action: 'delta' }, 'the sender reports it so too')
  t.ok((await readFile(join(work, 'big.bin'))).equals(now), 'written as it is now')
  t.same(deltaVersions(p), [2], 'one delta, ending with the XXH3-128 of the file (format version 2)')
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const st = await stat(join(work, 'big.bin'))
  const base = store.getBase('big.bin')
  t.ok(base?.size === now.length && Math.abs((base?.mtimeMs ?? 0) - st.mtimeMs) < 0.01, 'its base: size and mtime')
  t.equal(store.getBase('big.bin')?.digest, undefined, 'no digest: an XXH3-128 is not filed as one')
  t.equal(store.get('big.bin'), undefined, 'no record: chunked when first needed as a seed')
})

t.test('from 8 MiB a file changed in place goes direct; under it, it is listed; both come as small deltas', async (t) => {
  for (const [size, direct] of [[MID_SIZE, true], [7 * 1024 * 1024, false]] as const) {
    const before = randomBytes(size, size)
    const { home, work } = await pushedTrees(t, { 'f.bin': before })
    const now = edited(before, size + 1)
    await writeFile(join(home, 'f.bin'), now)
    const p = await pushOnce(home, work)
    t.same(wants(p).map((w) => w.direct === true), [direct], `${size} bytes: ${direct ? 'direct' : 'an ordinary want'}`)
    t.equal(p.fromSender.some((m) => m.t === 'chunks'), !direct, direct ? 'no chunk list' : 'its chunk list')
    t.match(p.report.events.find((x) => x.path === 'f.bin'), { action: 'delta', seed: 'f.bin' })
    t.ok((await readFile(join(work, 'f.bin'))).equals(now), 'written as it is now')
    const literal = p.report.events.find((x) => x.path === 'f.bin')?.literalBytes ?? size
    t.ok(literal < 120_000, `${literal} literal bytes for 40 KiB of edits`)
    t.ok(deltaVersions(p).length > 0 && deltaVersions(p).every((v) => v === 1), 'under 64 MiB: its delta ends with its SHA-256')
    const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
    t.equal(store.getBase('f.bin')?.digest, digestBytes(now), 'which the receiver files as its base')
    await store.close()
    if (!direct) continue
    // A sender of version 7 may end such a file with an XXH3-128 (no digest for the base): listed.
    await writeFile(join(home, 'f.bin'), edited(now, size + 5))
    const old7 = await pushOnce(home, work, { version: 7 })
    t.same(wants(old7).map((w) => w.direct === true), [false], 'with a sender of version 7, under 64 MiB: listed')
  }
})

t.test('a small file edited in place goes direct when its size changed; overwritten with a copy of another file, it is given up and found as a copy; the same size: listed', async (t) => {
  const text = (seed: number, n: number): Buffer => Buffer.from(Array.from(randomBytes(seed, n), (b) => 'abcdefghij klmnop\n'.charCodeAt(b % 18)))
  const before = text(61, 20_000)
  const now = Buffer.concat([before.subarray(0, 5000), Buffer.from('a line inserted\n'), before.subarray(5000, 15_000), before.subarray(15_040)])
  // Edited: direct, no list, a small delta from its old version.
  const { home, work } = await pushedTrees(t, { 'notes.md': before, 'other.md': text(62, 30_000) })
  await writeFile(join(home, 'notes.md'), now)
  let p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [true], 'direct')
  t.notOk(p.fromSender.some((m) => m.t === 'chunks'), 'no chunk list')
  t.match(p.report.events.find((x) => x.path === 'notes.md'), { action: 'delta', seed: 'notes.md' })
  t.ok((await readFile(join(work, 'notes.md'))).equals(now), 'written as it is now')
  // Overwritten with a copy of other.md (another size, nothing like it): direct, given up after
  // round 1, asked for again with its list, and copied here from other.md.
  const other = await readFile(join(home, 'other.md'))
  await writeFile(join(home, 'notes.md'), other)
  p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [true, false], 'direct, then an ordinary want')
  t.match(p.report.events.filter((x) => x.path === 'notes.md'), [{ action: 'copy' }], 'found by its digest')
  t.ok((await readFile(join(work, 'notes.md'))).equals(other))
  // Edited in place at the same size: listed.
  const same = Buffer.from(other)
  same.write('EDITED', 9000)
  await writeFile(join(home, 'notes.md'), same)
  p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [false], 'the same size: an ordinary want')
  t.ok((await readFile(join(work, 'notes.md'))).equals(same))
})

t.test('a small direct file read whole by the sender: one that grew after it was listed is asked for again with its list, one rewritten is sent as read, one gone is not written', async (t) => {
  const before = randomBytes(63, 40_000)
  const edit = (seed: number): Buffer => Buffer.concat([before.subarray(0, 10_000), randomBytes(seed, 300), before.subarray(10_000)])
  // Grown once its want went: the read finds more than the walk's size and streams it; its
  // matches are for another size, so the receiver asks again, with its list.
  let { home, work } = await pushedTrees(t, { 'a.bin': before })
  await writeFile(join(home, 'a.bin'), edit(64))
  let p = await pushOnce(home, work, { onWant: once(() => appendFile(join(home, 'a.bin'), randomBytes(65, 700))) })
  t.same(wants(p).map((w) => w.direct === true), [true, false], 'grown: direct, then again with its list')
  t.ok((await readFile(join(work, 'a.bin'))).equals(await readFile(join(home, 'a.bin'))), 'grown: written as it is now')
  // Rewritten at the walk's size once its want went: what is read is what is sent and checked.
  ;({ home, work } = await pushedTrees(t, { 'a.bin': before }))
  await writeFile(join(home, 'a.bin'), edit(66))
  const rewritten = edit(67)
  p = await pushOnce(home, work, { onWant: once(() => writeFile(join(home, 'a.bin'), rewritten)) })
  t.same(wants(p).map((w) => w.direct === true), [true], 'rewritten: direct, once')
  t.match(p.report.events.filter((x) => x.path === 'a.bin'), [{ action: 'delta', seed: 'a.bin' }], 'rewritten: a delta from its old version')
  t.ok((await readFile(join(work, 'a.bin'))).equals(rewritten), 'rewritten: written as read')
  // Gone once its want went: not written, the old version kept.
  ;({ home, work } = await pushedTrees(t, { 'a.bin': before }))
  await writeFile(join(home, 'a.bin'), edit(68))
  p = await pushOnce(home, work, { onWant: once(() => rm(join(home, 'a.bin'))) })
  t.ok((await readFile(join(work, 'a.bin'))).equals(before), 'gone: the old version is still there')
  t.same((await readdir(work)).filter((n) => n.startsWith('.dsync-tmp')), [], 'gone: no temp file left')
})

t.test('a small file whose folder is swapped for a symlink out of the root after its want (direct, or listed): not read through it, the old version kept', async (t) => {
  const before = randomBytes(69, 40_000)
  const now = Buffer.concat([before.subarray(0, 10_000), randomBytes(70, 300), before.subarray(10_000)])
  const secret = randomBytes(71, now.length)
  const { home, work } = await pushedTrees(t, { 'sub/a.bin': before })
  await writeFile(join(home, 'sub', 'a.bin'), now)
  const outside = await tempTree(t, { 'a.bin': secret })
  const p = await pushOnce(home, work, {
    onWant: once(async () => {
      await rename(join(home, 'sub'), join(home, 'sub-was'))
      await symlink(outside, join(home, 'sub'))
    }),
  })
  t.same(wants(p).map((w) => w.direct === true), [true], 'direct')
  t.ok((await readFile(join(work, 'sub', 'a.bin'))).equals(before), 'the old version is still there')
  t.match(p.sent.events.filter((x) => x.path === 'sub/a.bin'), [{ action: 'error', code: 'UNSAFE_PATH' }], 'refused on the sender')
  // Edited at the same size, it is wanted with its list, read for its record: refused alike.
  const trees = await pushedTrees(t, { 'sub/b.bin': before })
  const same = Buffer.from(before)
  same.write('EDITED', 9000)
  await writeFile(join(trees.home, 'sub', 'b.bin'), same)
  const q = await pushOnce(trees.home, trees.work, {
    onWant: once(async () => {
      await rename(join(trees.home, 'sub'), join(trees.home, 'sub-was'))
      await symlink(outside, join(trees.home, 'sub'))
      await rename(join(outside, 'a.bin'), join(outside, 'b.bin'))
    }),
  })
  t.same(wants(q).map((w) => w.direct === true), [false], 'listed')
  t.ok((await readFile(join(trees.work, 'sub', 'b.bin'))).equals(before), 'listed: the old version is still there')
  t.notOk(q.fromSender.some((m) => m.t === 'chunks' && m.size > 0), 'listed: no chunk list of the file outside went')
})

t.test('--force on a file only touched on the sender, whose copy here is not its base: kept, and filed with no digest (not the base\'s)', async (t) => {
  const { home, work } = await synced(t)
  const c1 = edited(old, 91)
  await writeFile(join(home, 'big.bin'), c1)
  await pushOnce(home, work, { version: 7 }) // direct, checked with SHA-256: the base's digest is c1's
  let store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.equal(store.getBase('big.bin')?.digest, digestBytes(c1), 'base: c1')
  await store.close()
  const c2 = edited(old, 92)
  await writeFile(join(work, 'big.bin'), c2) // changed here since: no longer its base
  await writeFile(join(home, 'big.bin'), c2)
  const later = new Date(Date.now() + 60_000)
  await utimes(join(home, 'big.bin'), later, later)
  const p = await pushOnce(home, work, { options: { force: true } })
  t.match(p.report.events.find((x) => x.path === 'big.bin'), { action: 'meta' }, 'the same bytes: kept, its time set')
  store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  t.not(store.getBase('big.bin')?.digest, digestBytes(c1), "not c1's digest: that is not what it holds")
})

t.test('a direct file with edits in one page in ten (dense) still costs about its edits: long holes of round 1 are refined', async (t) => {
  const size = MID_SIZE
  const before = randomBytes(size + 7, size)
  const { home, work } = await pushedTrees(t, { 'f.bin': before })
  const now = Buffer.from(before)
  const patch = randomBytes(size + 8, 64)
  let edits = 0
  for (let page = 0; page < size / 4096; page++) {
    if ((Math.imul(page + 1, 2654435761) >>> 0) % 10 !== 0) continue
    now.set(patch, page * 4096 + 1000)
    edits++
  }
  await writeFile(join(home, 'f.bin'), now)
  const p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [true], 'direct')
  t.ok((await readFile(join(work, 'f.bin'))).equals(now), 'written as it is now')
  const literal = p.report.events.find((x) => x.path === 'f.bin')?.literalBytes ?? size
  t.ok(literal < 4 * edits * 64, `${literal} literal bytes for ${edits} edits of 64 B (${edits * 64} B)`)
})

t.test('a direct file under 64 MiB that is not like its old version is asked for again with its list: a copy of another file here is made here', async (t) => {
  const size = MID_SIZE
  const other = randomBytes(size + 11, size)
  const { home, work } = await pushedTrees(t, { 'f.bin': randomBytes(size + 12, size), 'other.bin': other })
  await writeFile(join(home, 'f.bin'), other) // replaced by a copy of another file of the tree
  const p = await pushOnce(home, work)
  t.same(wants(p).filter((w) => w.path === 'f.bin').map((w) => w.direct === true), [true, false], 'direct first, then with its list')
  t.ok((await readFile(join(work, 'f.bin'))).equals(other), 'written as it is now')
  const e = p.report.events.filter((x) => x.path === 'f.bin')
  t.equal(e.length, 1, 'one event for it')
  t.equal(e[0]?.literalBytes ?? 0, 0, `no literal bytes (${e[0]?.action})`)
  t.notOk(p.fromSender.some((m) => m.t === 'data' && m.id === wants(p).find((w) => w.path === 'f.bin' && w.direct === true)?.id && m.bytes.length > 0), 'no data for the direct exchange')
})

t.test('a mid-size direct file touched on the receiver since, then edited on the sender, is overwritten: its base digest says it is the same (no conflict copy)', async (t) => {
  const size = MID_SIZE
  const before = randomBytes(size + 1, size)
  const { home, work } = await pushedTrees(t, { 'f.bin': before })
  const v2 = edited(before, size + 2)
  await writeFile(join(home, 'f.bin'), v2)
  t.same(wants(await pushOnce(home, work)).map((w) => w.direct === true), [true], 'second push: direct')
  const later = new Date(Date.now() + 120_000)
  await utimes(join(work, 'f.bin'), later, later) // touched there, same bytes
  const v3 = edited(v2, size + 3)
  await writeFile(join(home, 'f.bin'), v3)
  const p = await pushOnce(home, work)
  t.match(p.report.events.find((x) => x.path === 'f.bin'), { action: 'delta' }, 'a delta, not a conflict')
  t.same((await readdir(work)).filter((n) => n.includes('conflict')), [], 'no conflict copy')
  t.ok((await readFile(join(work, 'f.bin'))).equals(v3), 'written as it is now')
})

t.test('with a receiver of version 7 a direct file of 64 MiB or more ends with its SHA-256, which is filed (an older receiver checks only that in place)', async (t) => {
  const { home, work } = await synced(t)
  const now = edited(old, 74)
  await writeFile(join(home, 'big.bin'), now)
  const p = await pushOnce(home, work, { version: 7 })
  t.same(wants(p).map((w) => w.direct === true), [true], 'direct')
  t.ok(deltaVersions(p).length > 0 && deltaVersions(p).every((v) => v === 1), 'format version 1: SHA-256')
  t.ok((await readFile(join(work, 'big.bin'))).equals(now), 'written as it is now')
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  t.equal(store.getBase('big.bin')?.digest, digestBytes(now), 'its base: that SHA-256')
})

t.test('with a sender of version 6 the file is listed and decided as before', async (t) => {
  const { home, work } = await synced(t)
  const now = edited(old, 73)
  await writeFile(join(home, 'big.bin'), now)
  const p = await pushOnce(home, work, { version: 6 })
  t.same(wants(p).map((w) => w.direct === true), [false], 'an ordinary want')
  t.ok(p.fromSender.some((m) => m.t === 'chunks'), 'its chunk list')
  t.match(p.report.events.find((x) => x.path === 'big.bin'), { action: 'delta', seed: 'big.bin' })
  t.ok((await readFile(join(work, 'big.bin'))).equals(now), 'written as it is now')
  t.ok(deltaVersions(p).length > 0 && deltaVersions(p).every((v) => v === 1), 'its delta ends with the SHA-256 its list carried')
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  t.equal(store.getBase('big.bin')?.digest, digestBytes(now), 'which the receiver files')
})

t.test('a receiver whose copy changed since the last sync gets the list: its copy is kept as a conflict copy, not overwritten unseen', async (t) => {
  const { home, work } = await synced(t)
  const theirs = edited(old, 74)
  const mine = edited(old, 75)
  await writeFile(join(home, 'big.bin'), theirs)
  await writeFile(join(work, 'big.bin'), mine)
  const p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [false], 'an ordinary want')
  const e = p.report.events.find((x) => x.path === 'big.bin')
  t.match(e, { action: 'conflict' })
  t.ok((await readFile(join(work, 'big.bin'))).equals(theirs), "the sender's version written")
  t.ok((await readFile(join(work, e!.conflictCopy!))).equals(mine), "the receiver's kept beside it")

  // --force overwrites whatever the receiver has: no list needed for that either.
  const again = edited(old, 76)
  await writeFile(join(home, 'big.bin'), again)
  await writeFile(join(work, 'big.bin'), mine)
  const forced = await pushOnce(home, work, { options: { force: true } })
  t.same(wants(forced).map((w) => w.direct === true), [true], 'with --force, direct')
  t.ok((await readFile(join(work, 'big.bin'))).equals(again), 'overwritten')
})

t.test('a large file rewritten with other content goes whole after its matches measure it', async (t) => {
  const { home, work } = await synced(t)
  const other = randomBytes(77, SIZE)
  await writeFile(join(home, 'big.bin'), other)
  const p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [true], 'direct')
  const e = p.report.events.find((x) => x.path === 'big.bin')
  t.match(e, { action: 'whole', message: 'measured by matching', copiedBytes: 0 })
  t.ok((e?.similarity ?? 1) < 0.5, `not similar (${e?.similarity})`)
  t.ok((await readFile(join(work, 'big.bin'))).equals(other), 'written as it is now')
})

t.test('a large file only touched on the sender is checked against its digest where it is, not written again', async (t) => {
  const { home, work } = await synced(t)
  const later = new Date(Date.now() + 60_000)
  await utimes(join(home, 'big.bin'), later, later)
  const before = await stat(join(work, 'big.bin'))
  const p = await pushOnce(home, work)
  t.same(wants(p).map((w) => w.direct === true), [true], 'direct')
  t.match(p.report.events.find((x) => x.path === 'big.bin'), { action: 'meta' }, 'its time set')
  const after = await stat(join(work, 'big.bin'))
  t.equal(after.ino, before.ino, 'the same file: not rewritten')
  t.ok(Math.abs(after.mtimeMs - (await stat(join(home, 'big.bin'))).mtimeMs) < 0.01, `the sender's mtime (${after.mtimeMs} vs ${later.getTime()})`)
  t.ok((await readFile(join(work, 'big.bin'))).equals(old), 'its bytes as they were')
  t.same(deltaVersions(p), [2], 'checked with its XXH3-128')
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const base = store.getBase('big.bin')
  t.ok(base?.size === old.length && Math.abs((base?.mtimeMs ?? 0) - after.mtimeMs) < 0.01, 'its base: the size and the new mtime')
  t.equal(store.getBase('big.bin')?.digest, undefined, 'no digest filed from an XXH3-128')
})

t.test('a file matched whole in place that is not the same after all (this side changed under the rounds) comes whole', async (t) => {
  const { home, work } = await synced(t)
  const later = new Date(Date.now() + 60_000)
  await utimes(join(home, 'big.bin'), later, later)
  // Changed here once its signature went: the rounds see the old bytes, the check the new.
  const p = await pushOnce(home, work, { onPlan: once(() => writeFile(join(work, 'big.bin'), edited(old, 88))) })
  t.ok(p.fromReceiver.some((m) => m.t === 'plan' && m.method === 'whole'), 'asked for whole after the check failed')
  t.ok((await readFile(join(work, 'big.bin'))).equals(old), "the sender's bytes")
})

t.test('a file that grows on the sender after it was listed is asked for again, with its list, and arrives as it is now', async (t) => {
  const { home, work } = await synced(t)
  await writeFile(join(home, 'big.bin'), edited(old, 78))
  const grow = once(() => appendFile(join(home, 'big.bin'), randomBytes(79, 5000)))
  const p = await pushOnce(home, work, {
    onWant: async (w) => {
      if (w.direct === true) await grow()
    },
  })
  t.same(wants(p).map((w) => w.direct === true), [true, false], 'direct, then again with its list')
  t.ok((await readFile(join(work, 'big.bin'))).equals(await readFile(join(home, 'big.bin'))), 'written as it is now')
  t.match(p.report.events.filter((x) => x.path === 'big.bin'), [{ action: 'delta' }], 'one event for it: written')
})

t.test('a receiver whose own copy grows after its walk gives the direct plan up (not the session) and keeps that copy as a conflict copy', async (t) => {
  const { home, work } = await synced(t)
  const now = edited(old, 89)
  await writeFile(join(home, 'big.bin'), now)
  const local = randomBytes(90, 5000)
  const p = await pushOnce(home, work, {
    onWant: async (w) => {
      // Synchronously, before the receiver's signature reads the file (a local writer).
      if (w.direct === true) appendFileSync(join(work, 'big.bin'), local)
    },
  })
  t.same(wants(p).map((w) => w.direct === true), [true, false], 'direct, then again with its list')
  const e = p.report.events.find((x) => x.path === 'big.bin')
  t.match(e, { action: 'conflict' }, 'changed on both sides: a conflict')
  t.ok((await readFile(join(work, 'big.bin'))).equals(now), "the sender's version written")
  t.ok((await readFile(join(work, e!.conflictCopy!))).equals(Buffer.concat([old, local])), "this side's grown copy kept beside it")
})

t.test('a file gone from the sender after it was listed: the session ends, and the receiver keeps its version', async (t) => {
  const { home, work } = await synced(t)
  await writeFile(join(home, 'big.bin'), edited(old, 80))
  const p = await pushOnce(home, work, {
    onWant: async (w) => {
      if (w.direct === true) await rm(join(home, 'big.bin'))
    },
  })
  t.same(wants(p).map((w) => w.direct === true), [true], 'direct')
  t.ok((await readFile(join(work, 'big.bin'))).equals(old), 'the old version is still there')
  t.same((await readdir(work)).filter((n) => n.startsWith('.dsync-tmp')), [], 'no temp file left')
  t.notOk(p.report.events.some((x) => x.path === 'big.bin' && x.action !== 'error' && x.action !== 'unchanged'), 'not written')
})

t.test('a refined exchange whose file the sender can no longer read ends with an error for that file, not a session waiting for matches', async (t) => {
  // A file of 2 MB changed at the same path (no direct want; over 1 MiB, so not kept in memory
  // from its list): its list goes, then its plan;
  // the file goes before the plan reaches the sender, which then has no matches to send.
  const { home, work, before } = await syncedMid(t, 81)
  await utimes(join(home, 'mid.bin'), new Date(), new Date(Date.now() + 5000))
  const p = await pushOnce(home, work, { onPlan: () => rm(join(home, 'mid.bin')) })
  t.ok(p.fromReceiver.some((m) => m.t === 'plan' && m.refine === true), 'a refined plan went')
  t.ok((await readFile(join(work, 'mid.bin'))).equals(before), 'the old version is still there')
  t.match(p.report.events.filter((x) => x.path === 'mid.bin'), [{ action: 'error' }], 'one error line for it')
})

t.test('a file whose size changes after its chunk list went is asked for again, not taken for a broken peer', async (t) => {
  const { home, work } = await syncedMid(t, 84)
  const p = await pushOnce(home, work, { onPlan: once(() => appendFile(join(home, 'mid.bin'), randomBytes(86, 15))) })
  t.equal(wants(p).length, 2, 'asked for twice')
  t.ok((await readFile(join(work, 'mid.bin'))).equals(await readFile(join(home, 'mid.bin'))), 'written as it is now')
})

/** A sender of `home` talking to a scripted receiver, past the file list. */
async function senderOn(t: Test, home: string): Promise<{ peer: ReturnType<typeof memoryChannelPair>[1]; sending: Promise<void> }> {
  const [mine, peer] = memoryChannelPair()
  const store = await Store.open(home, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const sending = runSender(mine, { root: home, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal })
  sending.catch(() => undefined)
  for await (const m of peer.messages()) {
    if (m.t === 'summary') await peer.send({ t: 'summaryWant', paths: m.dirs.map((d) => d.path) })
    if (m.t === 'filesEnd') break
  }
  return { peer, sending }
}

t.test('a sender whose receiver ends the session in the middle of an exchange ends too (done at once after a plan; a close without done)', async (t) => {
  const home = await tempTree(t, { 'a.bin': randomBytes(87, 3_000_000) })
  {
    const { peer, sending } = await senderOn(t, home)
    await peer.send({ t: 'want', id: 1, path: 'a.bin', direct: true })
    await peer.send({ t: 'plan', id: 1, method: 'delta', seed: 'a.bin', similarity: 0, signature: null, refine: true })
    await peer.send({ t: 'done', summary: {} })
    await within(10_000, 'the sender, after done', sending)
    t.pass('done while its exchange had not begun: the sender returns')
  }
  {
    const { peer, sending } = await senderOn(t, home)
    await peer.send({ t: 'want', id: 1, path: 'a.bin', direct: true })
    await peer.send({ t: 'plan', id: 1, method: 'delta', seed: 'a.bin', similarity: 0, signature: null, refine: true })
    for await (const m of peer.messages()) if (m.t === 'matches') break
    peer.close(1000, 'bye')
    await within(10_000, 'the sender, after a close', t.rejects(sending, { code: 'NETWORK' }, 'closed without done: NETWORK'))
  }
})

t.test('a receiver asking for files not listed, twice under one id, or for more than 1024 files with no list and no plan, ends the session (BAD_MESSAGE)', async (t) => {
  const home = await tempTree(t, { 'a.bin': randomBytes(83, 1000) })
  for (const hostile of ['unlisted', 'same id', 'flood'] as const) {
    const { peer, sending } = await senderOn(t, home)
    if (hostile === 'unlisted') await peer.send({ t: 'want', id: 1, path: 'nope.bin', direct: true })
    // Each would start a read and a hash of the file.
    else if (hostile === 'same id') for (let i = 1; i <= 3; i++) void peer.send({ t: 'want', id: 1, path: 'a.bin', direct: true }).catch(() => undefined)
    else for (let i = 1; i <= 1100; i++) void peer.send({ t: 'want', id: i, path: 'a.bin', direct: true }).catch(() => undefined)
    const why = { unlisted: /not a file of the list/, 'same id': /names a file already/, flood: /more than 1024 files without a list/ }[hostile]
    await t.rejects(sending, { code: 'BAD_MESSAGE', message: why }, hostile)
  }
})
