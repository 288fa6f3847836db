import t from 'tap'
import type { Test } from 'tap'
import { readFile, readdir, writeFile, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import type { TreeEntry } from '../../src/fs/index.js'
import type { FileEntry } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { pull, push, SYNC_CHUNK_PARAMS, type ClientOptions, type SyncResult } from '../../src/sync/index.js'
import { PeerBases } from '../../src/sync/peer-bases.js'
import { TreeSummary } from '../../src/sync/tree-summary.js'
import { isConflictCopy } from '../../src/sync/conflict.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, startServer } from '../support/sync.js'

/** A later mtime than anything written so far, so "newer" never ties within a millisecond. */
async function touchLater(path: string, seconds: number): Promise<void> {
  const at = new Date(Date.now() + seconds * 1000)
  await utimes(path, at, at)
}

/** `n` small files in 13 folders, each its own content. */
/** `n` listed files, the i-th at `pathOf(i)`, i bytes long. */
function fileEntries(n: number, pathOf: (i: number) => string): FileEntry[] {
  return Array.from({ length: n }, (_, i) => ({ path: pathOf(i), kind: 'file', size: i, mtimeMs: 1_700_000_000_000 + i, mode: 0o644 }))
}

function manyFiles(n: number): Record<string, string> {
  const files: Record<string, string> = {}
  for (let i = 0; i < n; i++) files[`d${i % 13}/f${i}.txt`] = `v0 of ${i}\n`
  return files
}

/** Runs a push or pull that is stopped once `n` files have landed; the paths landed, in order. */
async function stoppedAfter(t: Test, n: number, run: (o: ClientOptions) => Promise<unknown>): Promise<string[]> {
  const stop = new AbortController()
  const landed: string[] = []
  await t.rejects(run(clientOpts({
    signal: stop.signal,
    onEvent: (e) => {
      if (e.action !== 'delta' && e.action !== 'whole' && e.action !== 'new') return
      landed.push(e.path)
      if (landed.length === n) stop.abort()
    },
  })), { code: 'ABORTED' })
  return landed
}

/** `path` was written over on the server by `result`'s push, as `text`: no conflict, no copy. */
async function overwritten(t: Test, result: SyncResult, served: string, path: string, text: string, why: string): Promise<void> {
  t.notMatch(result.events.find((e) => e.path === path), { action: 'conflict' }, why)
  t.equal(await readFile(join(served, path), 'utf8'), text)
  t.equal((await readdir(join(served, path, '..'))).filter(isConflictCopy).length, 0, 'and no conflict copy')
}

t.test('two machines pushing to one server: a push that never saw the other machine\'s version is a conflict, not an overwrite', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const home = await tempTree(t, { 'plan.txt': 'v1\n', 'other.txt': 'same\n' })
  const work = await tempTree(t)
  await push(home, server.url, clientOpts())
  await pull(server.url, work, clientOpts())

  await writeFile(join(home, 'plan.txt'), 'v2 from home\n')
  await touchLater(join(home, 'plan.txt'), 10)
  const fromHome = await push(home, server.url, clientOpts())
  t.match(fromHome.events.find((e) => e.path === 'plan.txt'), { action: 'delta' }, 'home\'s edit lands: the server had what home last synced')

  // Work has not pulled home's v2 and edits its own v1: the server's base for work is v1.
  await writeFile(join(work, 'plan.txt'), 'v3 from work\n')
  await touchLater(join(work, 'plan.txt'), 20)
  const fromWork = await push(work, server.url, clientOpts())
  const ev = fromWork.events.find((e) => e.path === 'plan.txt')
  t.match(ev, { action: 'conflict' }, 'work\'s push is told its version met one it never saw')
  t.equal(await readFile(join(served, 'plan.txt'), 'utf8'), 'v3 from work\n', 'the pusher\'s version is written')
  const copies = (await readdir(served)).filter(isConflictCopy)
  t.equal(copies.length, 1, 'and home\'s version is kept beside it')
  t.equal(await readFile(join(served, copies[0]!), 'utf8'), 'v2 from home\n', 'the copy holds home\'s edit: nothing lost')
  t.match(fromWork.events.find((e) => e.path === 'other.txt'), { action: 'unchanged' }, 'files neither changed stay quiet')

  // Home pushes again without having pulled work's version, its plan.txt unchanged since its push.
  const again = await push(home, server.url, clientOpts())
  t.match(again.events.find((e) => e.path === 'plan.txt'), { action: 'kept' }, 'home\'s older version does not replace work\'s: kept (pull to get it)')
  t.equal(await readFile(join(served, 'plan.txt'), 'utf8'), 'v3 from work\n')

  // After a pull, home's next edit is an ordinary overwrite again.
  await pull(server.url, home, clientOpts())
  await writeFile(join(home, 'plan.txt'), 'v4 from home\n')
  await touchLater(join(home, 'plan.txt'), 30)
  const after = await push(home, server.url, clientOpts())
  t.match(after.events.find((e) => e.path === 'plan.txt'), { action: 'delta' }, 'once home has seen the server\'s version, its edit writes')
  t.equal(await readFile(join(served, 'plan.txt'), 'utf8'), 'v4 from home\n')
})

t.test('pair bases: the folders a summary stood for are read only where they changed since they were last recorded', async (t) => {
  const entries = (changedSize: number): TreeEntry[] => [
    ...Array.from({ length: 10 }, (_, d): TreeEntry => ({ path: `d${d}`, kind: 'dir', size: 0, mtimeMs: 1_700_000_000_000, mode: 0o755 })),
    ...Array.from({ length: 200 }, (_, i): TreeEntry => ({
      path: `d${i % 10}/f${i}.txt`, kind: 'file', size: i === 33 ? changedSize : 100 + i, mtimeMs: 1_700_000_000_000, mode: 0o644,
    })),
  ]
  const store = await Store.open(await tempTree(t), { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const pairs = store.pairBases()
  let reads = 0
  const get = pairs.get.bind(pairs)
  pairs.get = (peer, path) => {
    reads++
    return get(peer, path)
  }
  const replica = 'ab'.repeat(16)
  /** One session's record: the folders stood for, and the entries listed. */
  const session = async (summary: TreeSummary, stoodFor: readonly string[], listed: readonly string[] = []): Promise<number> => {
    reads = 0
    const peer = PeerBases.open(store, replica)!
    peer.note(listed.flatMap((dir) => summary.children(dir) as FileEntry[]))
    for (const dir of stoodFor) peer.noteStoodFor(dir, summary)
    await peer.record([])
    return reads
  }
  const before = TreeSummary.of(entries(133))
  t.equal(await session(before, ['']), 210, 'the first record reads every entry')
  t.equal(await session(before, ['']), 0, 'a no-op reads none')
  // d3/f33.txt changed: the root and d3 are listed, the other nine folders stood for.
  const after = TreeSummary.of(entries(5000))
  t.equal(await session(after, ['d0', 'd1', 'd2', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9'], ['', 'd3']), 30, 'a change in d3: its 20 entries and the root\'s 10 read, none beside')
  t.equal(get(replica, 'd3/f33.txt')?.size, 5000, 'its base is the new one')
  t.equal(await session(after, ['']), 30, 'the no-op after: the root\'s and d3\'s entries alone')
  t.equal(await session(after, ['']), 0, 'and then none')
})

t.test('a push\'s pair bases are written as its files settle, a batch at a time; failed and kept files keep their old ones', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const pairs = store.pairBases()
  const peer = PeerBases.open(store, 'replica-a')!
  const batch = 1024 // SETTLED_BATCH
  const entries = fileEntries(batch + 10, (i) => `d${i % 50}/f${i}`)
  await pairs.update('replica-a', new Map([[entries[batch + 1]!.path, { kind: 'file', size: 1, mtimeMs: 1, mode: 0o644 }]]))
  peer.note(entries)
  for (const e of entries.slice(0, batch - 1)) peer.settled({ path: e.path, action: 'new' })
  await new Promise((r) => setTimeout(r, 50))
  t.equal(pairs.get('replica-a', entries[0]!.path), undefined, 'under a batch: nothing written yet')
  peer.settled({ path: entries[batch - 1]!.path, action: 'delta' })
  for (let i = 0; i < 100 && pairs.get('replica-a', entries[0]!.path) === undefined; i++) await new Promise((r) => setTimeout(r, 20))
  t.match(pairs.get('replica-a', entries[0]!.path), { kind: 'file', size: 0 }, 'a full batch is written while the session goes on')
  t.match(pairs.get('replica-a', entries[batch - 1]!.path), { size: batch - 1 })

  peer.settled({ path: entries[batch]!.path, action: 'error' })
  peer.settled({ path: entries[batch + 1]!.path, action: 'kept' })
  peer.settled({ path: entries[batch + 2]!.path, action: 'unchanged' })
  peer.settled({ path: entries[batch + 2]!.path, action: 'error' }) // a second word on a settled file changes nothing
  await peer.record([{ path: entries[batch]!.path, action: 'error' }, { path: entries[batch + 1]!.path, action: 'kept' }])
  t.equal(pairs.get('replica-a', entries[batch]!.path), undefined, 'a failed file gets no base')
  t.match(pairs.get('replica-a', entries[batch + 1]!.path), { size: 1, mtimeMs: 1 }, 'a kept file keeps its old base')
  t.match(pairs.get('replica-a', entries[batch + 2]!.path), { size: batch + 2 }, 'a file settled since the last batch: written by record')
  t.match(pairs.get('replica-a', entries[batch + 9]!.path), { size: batch + 9 }, 'listed and never settled (as a folder): written by record, as before')
})

t.test('a push that ends early leaves the pair bases of the files it settled, and none of the others', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const pairs = store.pairBases()
  const peer = PeerBases.open(store, 'replica-b')!
  const entries = fileEntries(3000, (i) => `f${i}`)
  peer.note(entries)
  for (const e of entries.slice(0, 2048)) peer.settled({ path: e.path, action: 'new' })
  // The session fails here: record is never called, and the session waits for what was started.
  await peer.written()
  t.match(pairs.get('replica-b', 'f2047'), { size: 2047 }, 'what settled is what both sides have')
  t.equal(pairs.get('replica-b', 'f2048'), undefined, 'what did not, keeps what it had')
})

t.test('a push cut short keeps the record of the files it finished: pushing one of them edited again is an overwrite, not a conflict', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const files = manyFiles(1300)
  const home = await tempTree(t, files)
  await push(home, server.url, clientOpts())
  // Every file edited; the push is stopped once 1,100 have landed (more than a batch of bases).
  for (const path of Object.keys(files)) {
    await writeFile(join(home, path), `v1 of ${path}, a little longer\n`)
    await touchLater(join(home, path), 10)
  }
  const first = (await stoppedAfter(t, 1100, (o) => push(home, server.url, o)))[0]!
  t.equal(await readFile(join(served, first), 'utf8'), `v1 of ${first}, a little longer\n`, 'the first file landed before the stop')
  await writeFile(join(home, first), 'v2 from home\n')
  await touchLater(join(home, first), 20)
  const again = await push(home, server.url, clientOpts())
  await overwritten(t, again, served, first, 'v2 from home\n', 'the server\'s version is the one home sent: no conflict')
})

t.test('a pull cut short keeps the record of the files it brought: pushing one of them edited is an overwrite, not a conflict', async (t) => {
  const files = manyFiles(1300)
  const served = await tempTree(t, files)
  const server = await startServer(t, served)
  const work = await tempTree(t)
  await pull(server.url, work, clientOpts())
  // Every file edited on the server; work's pull is stopped once 1,100 have landed.
  for (const path of Object.keys(files)) {
    await writeFile(join(served, path), `v1 of ${path}, edited on the server\n`)
    await touchLater(join(served, path), 10)
  }
  const first = (await stoppedAfter(t, 1100, (o) => pull(server.url, work, o)))[0]!
  t.equal(await readFile(join(work, first), 'utf8'), `v1 of ${first}, edited on the server\n`, 'the first file landed before the stop')
  await writeFile(join(work, first), 'v2 from work\n')
  await touchLater(join(work, first), 20)
  const back = await push(work, server.url, clientOpts())
  await overwritten(t, back, served, first, 'v2 from work\n', 'work had seen the server\'s version: no conflict')
})
