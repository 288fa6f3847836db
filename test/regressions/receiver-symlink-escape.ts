import t, { type Test } from 'tap'
import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { digestBytes } from '../../src/hash/index.js'
import { memoryChannelPair, type FileEntry } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { runReceiver, sessionOptions, SyncReport, SYNC_CHUNK_PARAMS } from '../../src/sync/index.js'
import { tempTree } from '../support/temp.js'

// A hostile sender's file list, played against a real receiver over an in-memory channel.
async function hostileSession(t: Test, entries: (outside: string) => FileEntry[]) {
  const outside = await tempTree(t)
  const root = await tempTree(t)
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const [sender, receiver] = memoryChannelPair()
  const report = new SyncReport()
  const done = runReceiver(receiver, {
    root,
    store,
    params: SYNC_CHUNK_PARAMS,
    options: sessionOptions(),
    report,
    signal: new AbortController().signal,
    now: () => new Date(),
  })
  await sender.send({ t: 'files', entries: entries(outside) })
  await sender.send({ t: 'filesEnd' })
  const seen: string[] = []
  for await (const m of sender.messages()) {
    seen.push(m.t)
    if (m.t === 'done' || m.t === 'want') break // never send a byte: end the session here
  }
  sender.close()
  await done.catch((err: unknown) => (seen.includes('done') ? Promise.reject(err) : undefined))
  return { outside, root, report, seen }
}

const owned = (path: string): FileEntry => ({ path, kind: 'file', size: 5, mtimeMs: 0, mode: 0o644, digest: digestBytes(Buffer.from('owned')) })

t.test('a file listed under a symlink out of the root is refused before a byte is asked for', async (t) => {
  const { outside, root, report, seen } = await hostileSession(t, (out) => [
    { path: 'escape', kind: 'symlink', size: 0, mtimeMs: 0, mode: 0o777, target: out },
    owned('escape/owned.txt'),
  ])
  t.same(await readdir(outside), [], 'nothing was written outside the root')
  t.ok((await lstat(join(root, 'escape'))).isSymbolicLink(), 'the link itself is kept as a link')
  t.match(report.events.find((e) => e.path === 'escape/owned.txt'), { action: 'error', code: 'UNSAFE_PATH' })
  t.notOk(seen.includes('want'), 'the receiver never asked for the file')
})

t.test('a directory re-listed as a symlink out of the root cannot lead a write outside', async (t) => {
  const { outside, report, seen } = await hostileSession(t, (out) => [
    { path: 'x', kind: 'dir', size: 0, mtimeMs: 0, mode: 0o755 },
    { path: 'x', kind: 'symlink', size: 0, mtimeMs: 0, mode: 0o777, target: out },
    owned('x/owned.txt'),
  ])
  t.same(await readdir(outside), [])
  t.match(report.events.find((e) => e.action === 'error' && e.path === 'x'), { code: 'UNSAFE_PATH' })
  t.ok(seen.includes('want'), 'x/owned.txt would go into the real directory x, inside the root')
})
