import t from 'tap'
import { readFile, readdir, writeFile, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import type { TreeEntry } from '../../src/fs/index.js'
import type { FileEntry } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { pull, push, SYNC_CHUNK_PARAMS } from '../../src/sync/index.js'
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
