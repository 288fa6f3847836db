import t from 'tap'
import { Packr } from 'msgpackr'
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isDsyncError } from '../../../src/errors.js'
import { decode, encode, type Message } from '../../../src/net/index.js'
import { sync } from '../../../src/sync/index.js'
import { tempTree } from '../../support/temp.js'
import { clientOpts, describeTree, startServer } from '../../support/sync.js'

const D = 'ab'.repeat(32)

t.test('the sync messages round-trip through the codec', async (t) => {
  const msgs: Message[] = [
    { t: 'state', entries: [{ path: 'a.txt', kind: 'file', size: 3, mtimeMs: 1.5, mode: 0o644, status: 'changed', digest: D as never }, { path: 'd', kind: 'dir', size: 0, mtimeMs: 2, mode: 0o755, status: 'deleted' }] },
    { t: 'stateEnd', replica: '0123456789abcdef0123456789abcdef', machine: 'home' },
    { t: 'digests', paths: ['a.txt', 'b'] },
    { t: 'digests', paths: ['a.txt', 'b'], digests: [D as never, undefined] },
    { t: 'ops', ops: [{ op: 'send', path: 'a' }, { op: 'move', path: 'a', to: 'b/c' }, { op: 'delete', path: 'x' }, { op: 'conflictCopy', path: 'p', to: 'p.dsync-conflict-home-20261124-000000' }] },
    { t: 'step', name: 'phaseEnd' },
  ]
  for (const m of msgs) t.same(decode(encode(m)), m, m.t)
})

t.test('malformed sync messages are BAD_MESSAGE, naming the field', async (t) => {
  const packr = new Packr({ useRecords: false, mapsAsObjects: true })
  const bad = (obj: unknown, field: RegExp, what: string): void => {
    try {
      decode(packr.pack(obj))
      t.fail(`${what}: accepted`)
    } catch (err) {
      t.ok(isDsyncError(err) && err.code === 'BAD_MESSAGE' && field.test(err.message), `${what}: ${(err as Error).message}`)
    }
  }
  const z = (items: unknown[]) => {
    const raw = packr.pack(items)
    return { codec: 0, raw: raw.length, z: raw }
  }
  bad({ t: 'state', ...z([['a', 0, 1, 1, 0o644, null, 9]]) }, /status/, 'an unknown status')
  bad({ t: 'state', ...z([['../x', 0, 1, 1, 0o644, null, 0]]) }, /path/, 'a path out of the root')
  bad({ t: 'ops', ...z([[1, 'a', null]]) }, /to/, 'a move without a target')
  bad({ t: 'ops', ...z([[7, 'a', null]]) }, /op/, 'an unknown op')
  bad({ t: 'digests', paths: ['a', 'b'], digests: [null] }, /digests/, 'fewer digests than paths')
  bad({ t: 'digests', paths: ['a'], digests: [new Uint8Array(5)] }, /digests/, 'a short digest')
  bad({ t: 'step', name: 'nope' }, /name/, 'an unknown step')
  bad({ t: 'stateEnd', replica: 'XYZ', machine: 'home' }, /replica/, 'a malformed replica id')
})

t.test('a dry run prints the plan and changes nothing on either side, not even state', async (t) => {
  const served = await tempTree(t, { 'server.txt': 'from the server\n' })
  const server = await startServer(t, served)
  const local = await tempTree(t, { 'local.txt': 'from here\n' })
  const before = { local: await describeTree(local), served: await describeTree(served) }
  const r = await sync(local, server.url, clientOpts({ dryRun: true }))
  t.same(r.plan!.decisions.map((d) => [d.outcome, d.path]).sort(), [['receive', 'server.txt'], ['send', 'local.txt']], 'the plan: one file each way')
  t.same(await describeTree(local), before.local, 'nothing changed here')
  t.same(await describeTree(served), before.served, 'nothing changed on the server')
  t.notOk((await readdir(local)).includes('.dsync'), 'no state folder made here')
  t.notOk((await readdir(served)).includes('.dsync'), 'nor on the server')
  const missing = join(local, 'not-yet')
  await sync(missing, server.url, clientOpts({ dryRun: true }))
  await t.rejects(stat(missing), 'a dry run into a missing directory does not create it')
})

t.test('a sync cut after the push phase is finished by the next one, without false conflicts', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const home = await tempTree(t, { 'a.txt': 'a1\n', 'b.txt': 'b1\n' })
  await sync(home, server.url, clientOpts({ machine: 'home' }))
  await writeFile(join(home, 'a.txt'), 'a2, edited at home\n')
  await writeFile(join(served, 'b.txt'), 'b2, edited on the server\n')
  // Cut the session once home's edit has been written on the server (the push phase), before
  // the pull phase brings b.txt and before any base is recorded.
  const ac = new AbortController()
  const cut = sync(home, server.url, clientOpts({
    machine: 'home', signal: ac.signal,
    onEvent: (e) => {
      if (e.side === 'remote' && e.path === 'a.txt') ac.abort()
    },
  }))
  await t.rejects(cut, 'the cut sync fails')
  t.equal(await readFile(join(served, 'a.txt'), 'utf8'), 'a2, edited at home\n', 'the push phase had landed')
  const r = await sync(home, server.url, clientOpts({ machine: 'home' }))
  t.same(r.events.filter((e) => e.action === 'conflict'), [], 'no conflict: a.txt is the same on both sides now')
  t.equal(await readFile(join(home, 'b.txt'), 'utf8'), 'b2, edited on the server\n', 'the server\'s edit arrives')
  t.same(await describeTree(home).then(noState), await describeTree(served).then(noState), 'the trees are equal')
})

function noState(tree: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).filter(([p]) => p !== '.dsync' && !p.startsWith('.dsync/')))
}
