import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { appendFile, lstat, open, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { memoryChannelPair, wrapChannel, type Message } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { isConflictCopy } from '../../src/sync/conflict.js'
import { pull, push, runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport, type SyncResult } from '../../src/sync/index.js'
import { within } from '../support/hostile.js'
import { tempTree } from '../support/temp.js'
import { TreeListing, walkTree } from '../../src/fs/index.js'
import { TreeSummary } from '../../src/sync/tree-summary.js'
import { clientOpts, describeTree, startServer } from '../support/sync.js'

// Issue 8: a no-op costs little on the wire. A version-4 sender offers its list by directory
// summary (PROTOCOL.md §4.9); the receiver asks only for the directories that differ.

const NOOP_BUDGET = 2048

/** 2,000 small files in 40 directories two levels deep. */
async function bigTree(t: Test): Promise<string> {
  const files: Record<string, string> = {}
  for (let d = 0; d < 40; d++) for (let f = 0; f < 50; f++) files[`p${d % 5}/q${d}/f${f}.txt`] = `file ${d}/${f}\n`.repeat(1 + (f % 5))
  return tempTree(t, files)
}

const wire = (r: SyncResult): number => r.summary.wireBytesSent + r.summary.wireBytesReceived

/** `cp -a`: the same content, modes and times to the nanosecond, no dsync state. */
function copyTree(from: string, to: string): void {
  execFileSync('cp', ['-a', `${from}/.`, to])
  execFileSync('rm', ['-rf', join(to, '.dsync')])
}

t.test('a no-op push or pull of 2,000 files costs under 2 KiB on the wire; a version-3 server still gets the whole list', async (t) => {
  const home = await bigTree(t)
  const served = await tempTree(t)
  const server = await startServer(t, served)
  t.equal((await push(home, server.url, clientOpts())).summary.transferred, 2000)
  const noop = await push(home, server.url, clientOpts())
  t.equal(noop.summary.unchanged, 2000, 'every file unchanged')
  t.ok(wire(noop) < NOOP_BUDGET, `a no-op push: ${wire(noop)} bytes both ways`)

  const work = await tempTree(t)
  await pull(server.url, work, clientOpts())
  const again = await pull(server.url, work, clientOpts())
  t.equal(again.summary.unchanged, 2000)
  t.ok(wire(again) < NOOP_BUDGET, `a no-op pull: ${wire(again)} bytes`)
  const back = await push(work, server.url, clientOpts())
  t.ok(wire(back) < NOOP_BUDGET, `pushed back from the pulled copy (times set twice): ${wire(back)} bytes`)

  const old = await startServer(t, await tempTree(t), { versions: [3, 2, 1] })
  await push(home, old.url, clientOpts())
  const listed = await push(home, old.url, clientOpts())
  t.equal(listed.summary.unchanged, 2000)
  t.ok(wire(listed) > 10 * wire(noop), `to a version-3 server the whole list goes: ${wire(listed)} bytes`)
})

t.test('a change deep in the tree lists only the directories on its path; --delete deletes what the sender deleted and nothing it did not list', async (t) => {
  const home = await bigTree(t)
  const served = [await tempTree(t), await tempTree(t)]
  const servers = [await startServer(t, served[0]!), await startServer(t, served[1]!, { versions: [3, 2, 1] })]
  for (const s of servers) await push(home, s.url, clientOpts())
  await appendFile(join(home, 'p1/q6/f3.txt'), 'one more line\n')
  await rm(join(home, 'p2/q7/f4.txt'))
  await writeFile(join(home, 'p3/q8/new.txt'), 'a new file\n')
  const [v4, v3] = [await push(home, servers[0]!.url, clientOpts({ delete: true })), await push(home, servers[1]!.url, clientOpts({ delete: true }))]
  for (const r of [v4, v3]) {
    const changed = r.events.filter((e) => e.action !== 'unchanged').map((e) => `${e.action} ${e.path}`).sort()
    t.same(changed, ['deleted p2/q7/f4.txt', 'delta p1/q6/f3.txt', 'new p3/q8/new.txt'])
    t.equal(r.summary.unchanged, 1998)
  }
  t.ok(v4.summary.wireBytesSent * 3 < v3.summary.wireBytesSent, `sent ${v4.summary.wireBytesSent} bytes by summary, ${v3.summary.wireBytesSent} with the whole list`)
  t.same(await describeTree(served[0]!), await describeTree(home), 'the tree is the sender\'s')
  t.same(await describeTree(served[1]!), await describeTree(home))
})

t.test('two trees copied with cp -a, no dsync state on either side: the first sync is a summary, and reads no file', async (t) => {
  const home = await bigTree(t)
  const served = await tempTree(t)
  copyTree(home, served)
  const server = await startServer(t, served)
  const r = await push(home, server.url, clientOpts())
  t.equal(r.summary.unchanged, 2000)
  t.equal(r.summary.filesRead, 0, 'no file read on the sender')
  t.ok(wire(r) < NOOP_BUDGET, `${wire(r)} bytes`)
  const work = await tempTree(t)
  copyTree(home, work)
  const p = await pull(server.url, work, clientOpts())
  t.equal(p.summary.unchanged, 2000)
  t.ok(wire(p) < NOOP_BUDGET, `and a pull into another copy: ${wire(p)} bytes`)
  // The first sync recorded every file's base: one the sender then deletes is deleted with
  // --delete (a file with no base is kept, "never synced from the sender").
  await rm(join(home, 'p4/q9/f0.txt'))
  const d = await push(home, server.url, clientOpts({ delete: true }))
  t.same(d.events.filter((e) => e.action !== 'unchanged').map((e) => `${e.action} ${e.path}`), ['deleted p4/q9/f0.txt'])
})

/**
 * A first sync of bigTree into a `cp -a` copy, both roles in this process; `tap` may replace the
 * receiver's store methods first, and `onSent` sees each message the receiver sends.
 */
async function firstSyncHere(t: Test, o: { tap?: (workStore: Store) => void; onSent?: (msg: Message) => void } = {}): Promise<{ home: string; work: string; workStore: Store; report: SyncReport; again: () => Promise<void> }> {
  const home = await bigTree(t)
  const work = await tempTree(t)
  copyTree(home, work)
  const homeStore = await Store.open(home, { params: SYNC_CHUNK_PARAMS })
  const workStore = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => Promise.all([homeStore.close(), workStore.close()]))
  o.tap?.(workStore)
  const [a, b] = memoryChannelPair()
  const receiverSide = wrapChannel(b, {
    send: (msg) => {
      o.onSent?.(msg)
      return b.send(msg)
    },
  })
  const signal = new AbortController().signal
  const report = new SyncReport()
  await within(20_000, 'a first sync', Promise.all([
    runSender(a, { root: home, store: homeStore, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal }).then(() => a.close()),
    runReceiver(receiverSide, { root: work, store: workStore, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal, now: () => new Date() }),
  ]))
  /** The same sync again, a no-op now. */
  const again = async (): Promise<void> => {
    const [c, d] = memoryChannelPair()
    await within(20_000, 'a no-op', Promise.all([
      runSender(c, { root: home, store: homeStore, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal }).then(() => c.close()),
      runReceiver(d, { root: work, store: workStore, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal, now: () => new Date() }),
    ]))
  }
  return { home, work, workStore, report, again }
}

t.test('a first sync of equal trees records the bases the summary stood for after `done` (the sender does not wait for them), before the receiver\'s session ends', async (t) => {
  const order: string[] = []
  const { work, workStore } = await firstSyncHere(t, {
    tap: (store) => {
      const setBases = store.setBases.bind(store)
      store.setBases = (bases) => {
        order.push(`bases ${bases.length}`)
        return setBases(bases)
      }
    },
    onSent: (msg) => order.push(msg.t),
  })
  const done = order.indexOf('done')
  const firstBases = order.findIndex((o) => o.startsWith('bases'))
  t.ok(done >= 0 && firstBases > done, `done, then the bases: ${order.join(', ')}`)
  let files = 0
  let withBase = 0
  for await (const e of walkTree(work)) {
    if (e.kind !== 'file') continue
    files++
    const st = await lstat(join(work, e.path))
    if (workStore.baseHasStat(e.path, { size: st.size, mtimeMs: st.mtimeMs })) withBase++
  }
  t.equal(files, 2000)
  t.equal(withBase, 2000, 'every file has its base once the receiver\'s session has ended')
})

t.test('a no-op whose folders are as they were when their bases were last seen to reads no base; a base written since voids its folders\' covers', async (t) => {
  const { work, workStore, again } = await firstSyncHere(t)
  const summary = async () => TreeSummary.from(await TreeListing.walk(work))
  const before = await summary()
  t.ok(workStore.covered('', before.hash('')!), 'the first sync, all bases seen to, notes the tree\'s summary')
  let reads = 0
  const baseHasStat = workStore.baseHasStat.bind(workStore)
  workStore.baseHasStat = (path, v) => {
    reads++
    return baseHasStat(path, v)
  }
  await again()
  t.equal(reads, 0, 'a no-op: no base read')
  await workStore.deleteBase('p0/q0/f0.txt')
  t.notOk(workStore.covered('', before.hash('')!), 'a base removed voids the root\'s cover')
  t.notOk(workStore.covered('p0/q0', before.hash('p0/q0')!), 'and its folder\'s')
  t.ok(workStore.covered('p0/q5', before.hash('p0/q5')!), 'not the folder beside it')
  await again()
  t.equal(reads, 50, 'the 50 bases of that folder seen to again, of 2,000')
  const st = await lstat(join(work, 'p0/q0/f0.txt'))
  t.ok(workStore.baseHasStat('p0/q0/f0.txt', { size: st.size, mtimeMs: st.mtimeMs }), 'the base removed is recorded again')
  t.ok(workStore.covered('', before.hash('')!), 'the root covered again')
})

t.test('a change in one folder: its session reads none of the bases beside it, and the next no-op only that folder\'s', async (t) => {
  const { work, workStore, again, home } = await firstSyncHere(t)
  let reads = 0
  const baseHasStat = workStore.baseHasStat.bind(workStore)
  workStore.baseHasStat = (path, v) => {
    reads++
    return baseHasStat(path, v)
  }
  await writeFile(join(home, 'p2/q7/f3.txt'), 'changed\n')
  await again()
  t.ok(reads <= 50, `${reads} bases read for a change in a folder of 50 files, of 2,000`)
  t.equal(await readFile(join(work, 'p2/q7/f3.txt'), 'utf8'), 'changed\n')
  reads = 0
  await again()
  t.equal(reads, 50, 'the no-op after it sees to that folder\'s 50 bases alone')
  reads = 0
  await again()
  t.equal(reads, 0, 'and the one after, none')
})

t.test('a store that cannot record the bases a summary stood for does not fail a session whose sender was told done', async (t) => {
  let tried = 0
  const { report } = await firstSyncHere(t, {
    tap: (store) => {
      store.setBases = async () => {
        tried++
        throw new Error('disk full')
      }
    },
  })
  t.equal(tried, 1, 'the write was tried, and the rest given up')
  t.equal(report.summary({ bytesSent: 0, bytesReceived: 0 }, 0).unchanged, 2000, 'the session ended as it had: 2,000 unchanged')
})

t.test('a time an older dsync set (~1 µs below the sender\'s, in the millisecond before) is quietly set again: the next no-op is a summary', async (t) => {
  const home = await tempTree(t, { 'a/x.txt': 'x\n', 'a/y.txt': 'y\n', 'b/z.txt': 'z\n' })
  const at = 1_700_000_000_123.5 // half way through a millisecond
  for (const p of ['a/x.txt', 'a/y.txt', 'b/z.txt']) await utimes(join(home, p), at / 1000, at / 1000)
  const served = await tempTree(t)
  const server = await startServer(t, served)
  await push(home, server.url, clientOpts())
  // What an older receiver could leave: 0.5004 ms below, the same to the quick check.
  const fh = await open(join(served, 'a/x.txt'), 'r+')
  await fh.utimes(Date.now() / 1000, (Math.floor(at) - 0.0004) / 1000)
  await fh.close()
  const first = await push(home, server.url, clientOpts())
  t.equal(first.summary.unchanged, 3, 'unchanged, and said so')
  t.equal(Math.floor((await stat(join(served, 'a/x.txt'))).mtimeMs), Math.floor(at), 'its time is in the sender\'s millisecond again')
  const second = await push(home, server.url, clientOpts())
  t.ok(wire(second) < wire(first), `the next no-op is smaller: ${wire(first)} → ${wire(second)} bytes`)
  t.ok(wire(second) < 800, `${wire(second)} bytes`)
})

t.test('a replica whose first push was a summary still gets its bases: its edit of a file it never saw change is a conflict, not an overwrite', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const home = await tempTree(t, { 'plan.txt': 'v1\n', 'notes/other.txt': 'same\n' })
  await push(home, server.url, clientOpts())
  const work = await tempTree(t)
  copyTree(served, work)
  const first = await push(work, server.url, clientOpts())
  t.equal(first.summary.unchanged, 2, 'work\'s first push: nothing to do')
  t.ok(wire(first) < NOOP_BUDGET, `${wire(first)} bytes: a summary`)

  await writeFile(join(home, 'plan.txt'), 'v2 from home\n')
  await utimes(join(home, 'plan.txt'), new Date(Date.now() + 10_000), new Date(Date.now() + 10_000))
  await push(home, server.url, clientOpts())
  await writeFile(join(work, 'plan.txt'), 'v3 from work\n')
  await utimes(join(work, 'plan.txt'), new Date(Date.now() + 20_000), new Date(Date.now() + 20_000))
  const r = await push(work, server.url, clientOpts())
  t.match(r.events.find((e) => e.path === 'plan.txt'), { action: 'conflict' }, 'work never saw v2: a conflict')
  const copies = (await readdir(served)).filter(isConflictCopy)
  t.equal(copies.length, 1)
  t.equal(await readFile(join(served, copies[0]!), 'utf8'), 'v2 from home\n', 'home\'s edit is kept beside it')
})

async function openStore(t: Test, root: string): Promise<Store> {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  return store
}

t.test('a directory of 1,100 subdirectories is offered in two summaries, each answered; an edit in the last one arrives', async (t) => {
  const files: Record<string, string> = {}
  for (let d = 0; d < 1100; d++) files[`top/d${String(d).padStart(4, '0')}/f.txt`] = `dir ${d}\n`
  const home = await tempTree(t, files)
  const served = await tempTree(t)
  const server = await startServer(t, served)
  await push(home, server.url, clientOpts())
  await appendFile(join(home, 'top/d1099/f.txt'), 'edited\n')
  const r = await push(home, server.url, clientOpts())
  t.same(r.events.filter((e) => e.action !== 'unchanged').map((e) => e.path), ['top/d1099/f.txt'])
  t.equal(r.summary.unchanged, 1099)
  t.equal(await readFile(join(served, 'top/d1099/f.txt'), 'utf8'), 'dir 1099\nedited\n')
  t.same(await describeTree(served), await describeTree(home))
})

t.test('a directory\'s new time and a time before 1970 arrive, and the next push is a summary again', async (t) => {
  const home = await tempTree(t, { 'a/b/x.txt': 'x\n', 'a/c/y.txt': 'y\n', 'old.txt': 'from 1969\n' })
  await utimes(join(home, 'old.txt'), '-86400', '-86400') // 1969-12-31, as an archive may hold (a number < 0 is "now" to Node)
  const served = await tempTree(t)
  const server = await startServer(t, served)
  await push(home, server.url, clientOpts())
  const old = (await stat(join(served, 'old.txt'))).mtimeMs
  t.ok(Math.floor(old) === -86_400_000 && old + 86_400_000 < 0.005, `the 1969 time arrives: ${old}`)
  const again = await push(home, server.url, clientOpts())
  t.same(again.events.filter((e) => e.action !== 'unchanged'), [], 'nothing to do the second time')
  t.ok(wire(again) < 800, `a summary: ${wire(again)} bytes`)

  const at = new Date('2001-02-03T04:05:06.789Z')
  await utimes(join(home, 'a/b'), at, at)
  await push(home, server.url, clientOpts())
  const dirTime = (await stat(join(served, 'a/b'))).mtimeMs
  t.ok(Math.floor(dirTime) === at.getTime() && dirTime - at.getTime() < 0.005, `a directory time changed alone is carried, as by a listing: ${dirTime}`)
  t.ok(wire(await push(home, server.url, clientOpts())) < 800, 'and the next no-op is a summary')
})

t.test('a hostile sender: a summary not asked for, twice, or after the list ends the session (BAD_MESSAGE)', async (t) => {
  const hash = new Uint8Array(16)
  const cases: [string, Message[], RegExp][] = [
    ['a subdirectory first', [{ t: 'summary', dirs: [{ path: 'a', hash }] }], /summary of a, which was not asked for/],
    ['the root twice', [{ t: 'summary', dirs: [{ path: '', hash }] }, { t: 'summary', dirs: [{ path: '', hash }] }], /summary of the root, which was not asked for/],
    ['after the list', [{ t: 'filesEnd' }, { t: 'summary', dirs: [{ path: '', hash }] }], /summary after the end of the file list/],
    // The root's summary stands for the whole tree: not once something is listed.
    ['the root after a listing', [{ t: 'files', entries: [{ path: 'b.txt', kind: 'file', size: 1, mtimeMs: 1, mode: 0o644 }] }, { t: 'summary', dirs: [{ path: '', hash }] }], /summary of the root, which was not asked for/],
  ]
  for (const [kase, msgs, why] of cases) {
    const root = await tempTree(t, { 'a/x.txt': 'x' })
    const [mine, peer] = memoryChannelPair()
    const receiving = runReceiver(mine, { root, store: await openStore(t, root), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal, now: () => new Date() })
    receiving.catch(() => undefined)
    for (const m of msgs) await peer.send(m)
    await t.rejects(within(10_000, kase, receiving), { code: 'BAD_MESSAGE', message: why }, kase)
  }
})

t.test('a hostile sender listing a path under a directory the receiver found the same: refused, the file there kept', async (t) => {
  const root = await tempTree(t, { 'a/x.txt': 'mine', 'b/y.txt': 'y' })
  const summary = TreeSummary.from(await TreeListing.walk(root))
  const a = await lstat(join(root, 'a'))
  const [mine, peer] = memoryChannelPair()
  const report = new SyncReport()
  const receiving = runReceiver(mine, { root, store: await openStore(t, root), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal: new AbortController().signal, now: () => new Date() })
  receiving.catch(() => undefined)
  const answers = peer.messages()[Symbol.asyncIterator]()
  const answer = async (): Promise<Message> => {
    for (;;) {
      const m = (await within(10_000, 'an answer', answers.next())).value.value as Message
      if (m.t === 'summaryWant' || m.t === 'done') return m
    }
  }
  await peer.send({ t: 'summary', dirs: [{ path: '', hash: new Uint8Array(16) }] })
  t.same(await answer(), { t: 'summaryWant', paths: [''] }, 'a root that differs is asked for')
  await peer.send({ t: 'files', entries: [{ path: 'a', kind: 'dir', size: 0, mtimeMs: a.mtimeMs, mode: a.mode & 0o7777 }] })
  await peer.send({ t: 'summary', dirs: [{ path: 'a', hash: summary.hash('a')! }] })
  t.same(await answer(), { t: 'summaryWant', paths: [] }, 'a is the same here')
  // a/x.txt is what the summary of a stood for: listed again (here as a link out of the
  // tree), it would be settled twice.
  await peer.send({ t: 'files', entries: [{ path: 'a/x.txt', kind: 'symlink', size: 4, mtimeMs: 1, mode: 0o777, target: '/etc/passwd' }] })
  await peer.send({ t: 'filesEnd' })
  t.equal((await answer()).t, 'done', 'the session ends')
  await peer.close()
  await receiving
  const refused = report.events.find((e) => e.path === 'a/x.txt' && e.action !== 'unchanged')
  t.equal(refused?.action, 'error')
  t.equal(refused?.code, 'UNSAFE_PATH')
  t.match(refused?.message, /listed outside the directories asked for/)
  t.ok((await lstat(join(root, 'a/x.txt'))).isFile(), 'still a regular file')
  t.equal(await readFile(join(root, 'a/x.txt'), 'utf8'), 'mine')
  t.equal(report.summary({ bytesSent: 0, bytesReceived: 0 }, 0).unchanged, 1, 'a/x.txt counted once, unchanged by the summary of a')
})

t.test('a hostile receiver: a summaryWant for a directory not offered, asked twice, or with no summary to answer ends the session (BAD_MESSAGE)', async (t) => {
  for (const kase of ['not offered', 'twice', 'unasked'] as const) {
    const home = await tempTree(t, { 'a/x.txt': 'x', 'a/b/y.txt': 'y' })
    const [mine, peer] = memoryChannelPair()
    const sending = runSender(mine, { root: home, store: await openStore(t, home), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal })
    sending.catch(() => undefined)
    for await (const m of peer.messages()) {
      if (m.t !== 'summary') continue
      t.same(m.dirs.map((d) => d.path), [''], 'the root is offered first')
      if (kase === 'not offered') await peer.send({ t: 'summaryWant', paths: ['a/b'] })
      if (kase === 'twice') await peer.send({ t: 'summaryWant', paths: ['', ''] })
      if (kase === 'unasked') {
        await peer.send({ t: 'summaryWant', paths: [] })
        await peer.send({ t: 'summaryWant', paths: [] })
      }
      break
    }
    const why = { 'not offered': /summaryWant for a\/b, not offered/, twice: /summaryWant for the root, not offered or asked for already/, unasked: /summaryWant with no summary to answer/ }[kase]
    await t.rejects(within(10_000, kase, sending), { code: 'BAD_MESSAGE', message: why }, kase)
  }
})
