import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { storedDelta } from '../../src/delta/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { LIMITS, memoryChannelPair, type Channel, type FileEntry, type Message } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { pull, push, runReceiver, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { BUNDLE_HISTORY_BYTES, BundleBuilder, BundleReader } from '../../src/sync/bundle.js'
import { within } from '../support/hostile.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const HOUR_AGO = Date.now() - 3_600_000

/** Seeded code-like text: lines of words from one small vocabulary, as files of one project share. */
function projectText(seed: number, bytes: number): Buffer {
  const words = ['const', 'return', 'await', 'function', 'export', 'import', 'value', 'index', 'result', 'options', 'signal', 'buffer', 'length', 'throw', 'new', 'Error', 'if', 'else', 'for', 'of']
  let x = seed * 2654435761 >>> 0 || 1
  const next = (): number => (x = (x ^ (x << 13) ^ (x >>> 17) ^ (x << 5)) >>> 0)
  const lines: string[] = []
  let n = 0
  while (n < bytes) {
    const k = 3 + (next() % 8)
    const line = '  '.repeat(next() % 4) + Array.from({ length: k }, () => words[next() % words.length]).join(' ') + (next() % 3 === 0 ? ` ${next() % 1000}` : '') + '\n'
    lines.push(line)
    n += line.length
  }
  return Buffer.from(lines.join('').slice(0, bytes))
}

async function sameTree(t: Test, root: string, files: Record<string, Uint8Array>, what: string): Promise<void> {
  let differ = 0
  for (const [p, b] of Object.entries(files)) if (!(await readFile(join(root, p))).equals(b)) differ++
  t.equal(differ, 0, what)
}

t.test('BundleBuilder packs whole data streams into one frame that unpacks to the same streams', async (t) => {
  const b = new BundleBuilder()
  t.equal(b.take(), undefined, 'nothing to take')
  const streams = [1, 2, 3].map((id) => ({ id, bytes: Buffer.concat(storedDelta(projectText(id, 3000 * id), digestBytes(projectText(id, 3000 * id)))) }))
  for (const s of streams) b.add(s.id, [s.bytes.subarray(0, 10), s.bytes.subarray(10)])
  t.equal(b.count, 3)
  const msg = b.take(3)!
  t.equal(b.count, 0, 'taken')
  t.equal(msg.raw, streams.reduce((a, s) => a + s.bytes.length, 0))
  t.ok(msg.z.length < msg.raw / 2, `text packs: ${msg.z.length} of ${msg.raw} bytes`)
  t.equal(msg.dict, 0, 'the first bundle has no history')
  const reader = new BundleReader()
  t.same(reader.unpack(msg).map((s) => [s.id, Buffer.from(s.bytes)]), streams.map((s) => [s.id, s.bytes]))
  // The next bundle is compressed with the one before as its dictionary: what repeats it is cheap.
  const again = projectText(1, 3000)
  const alone = new BundleBuilder()
  alone.add(4, [again])
  b.add(4, [again])
  const next = b.take(3)!
  t.equal(next.dict, Math.min(BUNDLE_HISTORY_BYTES, msg.raw), 'the history: the bundles before it')
  t.ok(next.z.length < alone.take(3)!.z.length / 4, `a repeat packs to ${next.z.length} bytes with the history`)
  t.same(reader.unpack(next).map((s) => [s.id, Buffer.from(s.bytes)]), [[4, again]], 'and unpacks with the same history')
  t.throws(() => new BundleReader().unpack(next), { code: 'BAD_MESSAGE', message: /bundle\.dict/ }, 'more history than the reader has')
  t.notOk(b.fits(LIMITS.maxBundleBytes + 1), 'no stream larger than a bundle fits')
  t.throws(() => b.add(9, [new Uint8Array(LIMITS.maxBundleBytes + 1)]), { code: 'INTERNAL' })
  // Content that starts with zstd's dictionary magic (any file may) is still a raw dictionary.
  const magic = new BundleBuilder()
  const reader2 = new BundleReader()
  const odd = Buffer.concat([Buffer.from([0x37, 0xa4, 0x30, 0xec]), projectText(9, 5000)])
  magic.add(1, [odd])
  magic.add(2, [odd])
  t.same(reader2.unpack(magic.take(3)!).map((s) => Buffer.from(s.bytes)), [odd, odd])
  magic.add(3, [odd])
  t.same(reader2.unpack(magic.take(3)!).map((s) => Buffer.from(s.bytes)), [odd], 'the next bundle, with that history as its dictionary')
  const bad = { ...msg, z: msg.z.map((x, i) => (i > 8 ? x ^ 0x5a : x)) }
  t.throws(() => new BundleReader().unpack(bad), { code: 'BAD_MESSAGE', message: /bundle\.z/ }, 'a frame that does not unpack is the peer\'s fault')
})

t.test('a first push of many small text files goes in bundles: fewer bytes than file by file, and the same trees', async (t) => {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < 120; i++) files[`src/m${i % 6}/f${i}.ts`] = projectText(i + 1, 300 + ((i * 997) % 12_000))
  files['big/text.txt'] = projectText(999, 600 * 1024) // probed, then asked for whole: bundled too
  const home = await tempTree(t, files)
  const now = await tempTree(t)
  const old = await tempTree(t)
  const current = await startServer(t, now)
  const older = await startServer(t, old, { versions: [2, 1] })
  const v3 = await push(home, current.url, clientOpts())
  const v2 = await push(home, older.url, clientOpts())
  await sameTree(t, now, files, 'every file written exactly, in bundles')
  await sameTree(t, old, files, 'and by a version-2 server, file by file')
  t.equal(v3.events.filter((e) => e.action === 'new').length, 121)
  const ratio = v3.summary.wireBytesSent / v2.summary.wireBytesSent
  t.ok(ratio < 0.95, `bundles: ${v3.summary.wireBytesSent} B sent, file by file ${v2.summary.wireBytesSent} B (${ratio.toFixed(3)})`)
  // The server sends bundles too, on a pull.
  const back = await tempTree(t)
  const pulled = await pull(current.url, back, clientOpts())
  await sameTree(t, back, files, 'a pull writes every file exactly')
  t.equal(pulled.events.filter((e) => e.action === 'new').length, 121)
})

/** The receiver role on `root`, talking to the returned channel end (a scripted sender). */
async function receiverOn(t: Test, root: string): Promise<{ peer: Channel; done: Promise<void> }> {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const [mine, peer] = memoryChannelPair()
  const done = runReceiver(mine, { root, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal, now: () => new Date() })
  done.catch(() => undefined)
  return { peer, done }
}

function entry(path: string, bytes: Uint8Array): FileEntry {
  return { path, kind: 'file', size: bytes.length, mtimeMs: HOUR_AGO, mode: 0o644 }
}

function bundleOf(files: readonly { id: number; bytes: Uint8Array }[]): Extract<Message, { t: 'bundle' }> {
  const b = new BundleBuilder()
  for (const f of files) b.add(f.id, storedDelta(f.bytes, digestBytes(f.bytes)))
  return b.take()!
}

/** Lists `files` (small and new: each asked for whole) and collects the wants. */
async function listed(peer: Channel, files: Record<string, Uint8Array>): Promise<Map<string, number>> {
  await peer.send({ t: 'files', entries: Object.entries(files).map(([p, b]) => entry(p, b)) })
  await peer.send({ t: 'filesEnd' })
  const ids = new Map<string, number>()
  for await (const m of peer.messages()) {
    if (m.t === 'want') ids.set(m.path, m.id)
    if (ids.size === Object.keys(files).length) break
  }
  return ids
}

t.test('the receiver writes each file of a bundle from its stream, and refuses a bundle out of turn (BAD_MESSAGE)', async (t) => {
  const files = { 'a.txt': Buffer.from('alpha\n'), 'b.txt': Buffer.from('beta\n'), 'c.txt': Buffer.from('gamma\n') }
  const root = await tempTree(t)
  const { peer, done } = await receiverOn(t, root)
  const ids = await listed(peer, files)
  await peer.send(bundleOf([{ id: ids.get('a.txt')!, bytes: files['a.txt'] }, { id: ids.get('b.txt')!, bytes: files['b.txt'] }]))
  await peer.send(bundleOf([{ id: ids.get('c.txt')!, bytes: files['c.txt'] }]))
  for await (const m of peer.messages()) if (m.t === 'done') break
  peer.close()
  await within(10_000, 'the receiver', done)
  for (const [p, b] of Object.entries(files)) t.same(await readFile(join(root, p)), b, `${p} written from the bundle`)

  for (const [what, play] of [
    ['a bundle for a file never asked for', async (p: Channel, _ids: Map<string, number>) => p.send(bundleOf([{ id: 77, bytes: files['a.txt'] }]))],
    ['data after the bundle that held the file', async (p: Channel, ids: Map<string, number>) => {
      await p.send(bundleOf([{ id: ids.get('a.txt')!, bytes: files['a.txt'] }]))
      await p.send({ t: 'data', id: ids.get('a.txt')!, bytes: new Uint8Array(3) })
    }],
    ['a second bundle for a file', async (p: Channel, ids: Map<string, number>) => {
      await p.send(bundleOf([{ id: ids.get('b.txt')!, bytes: files['b.txt'] }]))
      await p.send(bundleOf([{ id: ids.get('b.txt')!, bytes: files['b.txt'] }]))
    }],
    ['a bundle after the file\'s data began', async (p: Channel, ids: Map<string, number>) => {
      await p.send({ t: 'data', id: ids.get('c.txt')!, bytes: storedDelta(files['c.txt'], digestBytes(files['c.txt']))[0]!.subarray(0, 4) })
      await p.send(bundleOf([{ id: ids.get('c.txt')!, bytes: files['c.txt'] }]))
    }],
    ['a bundle that does not unpack', async (p: Channel, ids: Map<string, number>) => {
      const b = bundleOf([{ id: ids.get('a.txt')!, bytes: Buffer.alloc(4000, 7) }])
      await p.send({ ...b, z: b.z.map((x, i) => (i > 8 ? x ^ 0x33 : x)) })
    }],
  ] as const) {
    const other = await tempTree(t)
    const r = await receiverOn(t, other)
    const ids2 = await listed(r.peer, files)
    await play(r.peer, ids2)
    await t.rejects(within(10_000, what, r.done), { code: 'BAD_MESSAGE' }, `${what}: the session ends`)
    r.peer.close()
  }
})
