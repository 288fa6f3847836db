/**
 * Large files sent whole, checked with XXH3-128 (PROTOCOL.md §4.11, delta format version 2):
 * what goes on the wire with each protocol version, what the receiver files, and what it
 * refuses.
 */
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { copyFile, readFile, utimes } from 'node:fs/promises'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { chunkBytes, cutterFor } from '../../src/chunk/index.js'
import { EMPTY_SIGNATURE, encodeDelta } from '../../src/delta/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { memoryChannelPair, SUPPORTED_VERSIONS, wrapChannel, type Channel, type FileEntry, type Message } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { WINDOWED_PROBE_BYTES } from '../../src/sync/probe.js'
import { within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'

const PAST = (Date.now() - 3_600_000) / 1000
const DELTA_MAGIC = [0x64, 0x73, 0x44]

async function openStore(t: Test, root: string): Promise<Store> {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  return store
}

/** Both roles in one process, home → work, speaking protocol `version`; the delta format
 *  version of each file's `data` (the header's fourth byte), and the message types sent. */
async function pushOnce(t: Test, home: string, work: string, version?: number): Promise<{ report: SyncReport; deltaVersions: Map<number, number>; sent: Set<string> }> {
  const [a, b] = memoryChannelPair()
  const deltaVersions = new Map<number, number>()
  const sent = new Set<string>()
  const tapped = wrapChannel(a, {
    send: async (msg) => {
      sent.add(msg.t)
      if (msg.t === 'data' && !deltaVersions.has(msg.id)) {
        t.same([...msg.bytes.subarray(0, 3)], DELTA_MAGIC, 'a delta')
        deltaVersions.set(msg.id, msg.bytes[3]!)
      }
      return a.send(msg)
    },
  })
  const report = new SyncReport()
  const signal = new AbortController().signal
  const v = version !== undefined ? { version } : {}
  const home_ = await openStore(t, home)
  const work_ = await openStore(t, work)
  await within(30_000, 'a push', Promise.all([
    runSender(tapped, { root: home, store: home_, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal, ...v }).then(() => a.close()),
    runReceiver(b, { root: work, store: work_, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal, now: () => new Date(), ...v }),
  ]))
  return { report, deltaVersions, sent }
}

const huge = randomBytes(41, WINDOWED_PROBE_BYTES + 2_000_000)

t.test('a new file over 64 MiB goes whole checked with XXH3-128, is filed here by size and time alone, and a copy of it later is still made here', async (t) => {
  const home = await tempTree(t, { 'huge.bin': huge })
  const work = await tempTree(t, { 'other.bin': randomBytes(42, 100_000) })
  const first = await pushOnce(t, home, work)
  t.same([...first.deltaVersions.values()], [2], 'one delta, of format version 2')
  t.match(first.report.events.find((e) => e.path === 'huge.bin'), { action: 'new' })
  t.ok((await readFile(join(work, 'huge.bin'))).equals(huge), 'written as sent')
  let store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  const base = store.getBase('huge.bin')
  t.equal(base?.digest, undefined, 'no digest filed: XXH3-128 is no identity')
  t.equal(base?.size, huge.length, 'the base: its size')
  t.ok(base?.mtimeMs !== undefined, '… and its mtime')
  t.equal(store.get('huge.bin'), undefined, 'no record: it is hashed when first needed')
  await store.close()

  // The same bytes at a new path: the receiver hashes its own file to know it has them.
  await copyFile(join(home, 'huge.bin'), join(home, 'copy.bin'))
  await utimes(join(home, 'huge.bin'), PAST, PAST)
  await utimes(join(work, 'huge.bin'), PAST, PAST) // both unchanged since the sync, for the quick check
  const second = await pushOnce(t, home, work)
  t.match(second.report.events.find((e) => e.path === 'copy.bin'), { action: 'copy', seed: 'huge.bin' })
  t.notOk(second.sent.has('data'), 'no data sent')
  t.ok((await readFile(join(work, 'copy.bin'))).equals(huge))
  store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.equal(store.getBase('copy.bin')?.digest, digestBytes(huge), 'the copy is filed by the digest computed here')
  await store.close()
})

t.test('with a version-5 peer the same file goes with its SHA-256, and is filed by it', async (t) => {
  const home = await tempTree(t, { 'huge.bin': huge })
  const work = await tempTree(t, {})
  const { report, deltaVersions } = await pushOnce(t, home, work, 5)
  t.same([...deltaVersions.values()], [1], 'format version 1')
  t.match(report.events.find((e) => e.path === 'huge.bin'), { action: 'new' })
  t.ok((await readFile(join(work, 'huge.bin'))).equals(huge))
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.equal(store.getBase('huge.bin')?.digest, digestBytes(huge))
  await store.close()
})

t.test('files whose SHA-256 is wanted anyway keep it: a small one sent whole, one listed with its chunks', async (t) => {
  const small = randomBytes(43, 300_000)
  const mid = randomBytes(44, 3_000_000)
  const home = await tempTree(t, { 'small.bin': small, 'mid.bin': mid })
  const work = await tempTree(t, { 'other.bin': randomBytes(45, 100_000) })
  const { deltaVersions, report, sent } = await pushOnce(t, home, work)
  t.same([...deltaVersions.values()], [1], 'the listed one: a delta of format version 1')
  t.ok(sent.has('bundle'), 'the small one in a bundle (a SHA-256 per file)')
  t.same(report.events.filter((e) => e.action === 'new').map((e) => e.path).sort(), ['mid.bin', 'small.bin'])
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.equal(store.get('small.bin')?.digest, digestBytes(small), 'the small one recorded with its digest')
  t.equal(store.get('mid.bin')?.digest, digestBytes(mid), 'the listed one too')
  await store.close()
})

/** The receiver on `root` against a scripted sender that lists `files`, answers each `want`
 *  with `answer`, and a plan with the same; the session must end within 10 s. */
async function scriptedPush(t: Test, root: string, files: FileEntry[], answer: (peer: Channel, m: Extract<Message, { t: 'want' | 'plan' | 'wholeWant' }>) => Promise<void>): Promise<SyncReport> {
  const store = await openStore(t, root)
  const [mine, peer] = memoryChannelPair()
  const report = new SyncReport()
  const done = runReceiver(mine, { root, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal: new AbortController().signal, now: () => new Date() })
  await peer.send({ t: 'files', entries: files })
  await peer.send({ t: 'filesEnd' })
  const play = async (): Promise<void> => {
    for await (const m of peer.messages()) {
      if (m.t === 'want' || m.t === 'plan' || m.t === 'wholeWant') await answer(peer, m)
      else if (m.t === 'done') return
    }
  }
  try {
    await within(10_000, 'the receiver\'s session', play())
  } finally {
    peer.close()
  }
  await done
  return report
}

/** `bytes` whole, as a delta of format version 2; `corrupt`: one bit of the check flipped. */
async function fastWhole(bytes: Uint8Array, corrupt = false): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const b of encodeDelta(EMPTY_SIGNATURE, [bytes], { fastCheck: true }).bytes) parts.push(b.slice())
  const out = Buffer.concat(parts)
  if (corrupt) out[out.length - 1]! ^= 1
  return out
}

t.test('a sender whose XXH3-128 does not match: nothing written, asked again, then the file fails', async (t) => {
  const root = await tempTree(t, {})
  const bytes = randomBytes(46, 700)
  let sends = 0
  const report = await scriptedPush(t, root, [{ path: 'f.bin', kind: 'file', size: bytes.length, mtimeMs: PAST * 1000, mode: 0o644 }], async (peer, m) => {
    if (m.t === 'want' && m.whole !== true) {
      await peer.send({ t: 'chunks', id: m.id, size: bytes.length, chunks: chunkBytes(bytes, cutterFor(SYNC_CHUNK_PARAMS)), digest: digestBytes(bytes) })
      return
    }
    sends++
    await peer.send({ t: 'data', id: m.id, bytes: await fastWhole(bytes, true) })
    await peer.send({ t: 'dataEnd', id: m.id })
  })
  t.ok(sends >= 2, `asked again (${sends} sends)`)
  t.match(report.events.find((e) => e.path === 'f.bin'), { action: 'error' })
  await t.rejects(readFile(join(root, 'f.bin')), { code: 'ENOENT' }, 'nothing written')
})

t.test('XXH3-128 for a file whose SHA-256 was listed is refused: the check must be the one listed', async (t) => {
  const root = await tempTree(t, {})
  const bytes = randomBytes(47, 100_000) // over 4 chunks: not asked for whole, so its list comes first
  const report = await scriptedPush(t, root, [{ path: 'f.bin', kind: 'file', size: bytes.length, mtimeMs: PAST * 1000, mode: 0o644 }], async (peer, m) => {
    if (m.t === 'want') {
      // Answered with a list whatever was asked: the receiver now knows the file's SHA-256.
      await peer.send({ t: 'chunks', id: m.id, size: bytes.length, chunks: chunkBytes(bytes, cutterFor(SYNC_CHUNK_PARAMS)), digest: digestBytes(bytes) })
      return
    }
    await peer.send({ t: 'data', id: m.id, bytes: await fastWhole(bytes) }) // the right XXH3-128
    await peer.send({ t: 'dataEnd', id: m.id })
  })
  t.match(report.events.find((e) => e.path === 'f.bin'), { action: 'error', code: 'BAD_DATA' })
  await t.rejects(readFile(join(root, 'f.bin')), { code: 'ENOENT' }, 'nothing written')
})

t.test('a small file a sender checked with XXH3-128 all the same is written, and filed by size and time', async (t) => {
  const root = await tempTree(t, {})
  const bytes = randomBytes(48, 700)
  const report = await scriptedPush(t, root, [{ path: 'f.bin', kind: 'file', size: bytes.length, mtimeMs: PAST * 1000, mode: 0o644 }], async (peer, m) => {
    t.equal(m.t === 'want' && m.whole, true, 'a small new file is asked for whole')
    await peer.send({ t: 'data', id: m.id, bytes: await fastWhole(bytes) })
    await peer.send({ t: 'dataEnd', id: m.id })
  })
  t.match(report.events.find((e) => e.path === 'f.bin'), { action: 'new' })
  t.ok((await readFile(join(root, 'f.bin'))).equals(bytes))
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.equal(store.get('f.bin'), undefined, 'no record')
  t.same(store.getBase('f.bin'), { size: bytes.length, mtimeMs: store.getBase('f.bin')?.mtimeMs }, 'a base without digest')
  await store.close()
})

t.test('where no XXH3-128 can load (node --jitless --no-addons: no WebAssembly, no native addon), dsync offers versions up to 5 and writes format version 1: no peer sends it what it cannot check', async (t) => {
  const script = `
    const { localVersions } = await import(${JSON.stringify(new URL('../../src/net/handshake.js', import.meta.url).href)})
    const { encodeDelta, EMPTY_SIGNATURE } = await import(${JSON.stringify(new URL('../../src/delta/index.js', import.meta.url).href)})
    await (await import(${JSON.stringify(new URL('../../src/compress/index.js', import.meta.url).href)})).loadCodecs()
    let version
    for await (const b of encodeDelta(EMPTY_SIGNATURE, [new Uint8Array(10)], { fastCheck: true }).bytes) { version ??= b[3] }
    console.log(JSON.stringify({ versions: await localVersions(), version }))`
  const run = async (flags: string[]) => JSON.parse((await promisify(execFile)(process.execPath, [...flags, '--input-type=module', '-e', script])).stdout)
  t.same(await run(['--jitless', '--no-addons']), { versions: [5, 4, 3, 2, 1], version: 1 })
  t.same(await run([]), { versions: [...SUPPORTED_VERSIONS], version: 2 }, 'and with both, 6 on and format version 2')
  t.same(await run(['--jitless']), { versions: [...SUPPORTED_VERSIONS], version: 2 }, 'the native addon alone: the same')
  t.same(await run(['--no-addons']), { versions: [...SUPPORTED_VERSIONS], version: 2 }, 'WebAssembly alone: the same')
})
