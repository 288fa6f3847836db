/**
 * Probes for files at new paths (PROTOCOL.md §4.6): a few content keys instead of a chunk list,
 * the list only when a key is found here, the digest only when a file of the size is here.
 */
import t, { type Test } from 'tap'
import { appendFile, readFile, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { chunkBytes, chunkParams, cutterFor } from '../../src/chunk/index.js'
import { EMPTY_SIGNATURE, encodeDelta } from '../../src/delta/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { memoryChannelPair, wrapChannel, type Channel, type Message, type MessageTag } from '../../src/net/index.js'
import { probeFingerprints, sampleChunks, sampleFingerprints, Store } from '../../src/store/index.js'
import { runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { probeWindows, WINDOWED_PROBE_BYTES, windowedProbeKeys } from '../../src/sync/probe.js'
import { within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'

const PAST = (Date.now() - 3_600_000) / 1000

async function openStore(t: Test, root: string): Promise<Store> {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  return store
}

/** Both roles in one process, home → work; every message type counted by direction, and the
 *  paths each `want` asked with a probe. */
async function pushOnce(t: Test, home: string, work: string, onSend?: (msg: Message) => Promise<void>): Promise<{ report: SyncReport; sent: Map<MessageTag, number>; back: Map<MessageTag, number>; probed: string[] }> {
  const [a, b] = memoryChannelPair()
  const sent = new Map<MessageTag, number>()
  const back = new Map<MessageTag, number>()
  const probed: string[] = []
  const count = (m: Map<MessageTag, number>, msg: Message) => m.set(msg.t, (m.get(msg.t) ?? 0) + 1)
  const tapped = wrapChannel(a, {
    send: async (msg) => {
      count(sent, msg)
      await onSend?.(msg)
      return a.send(msg)
    },
    messages: async function* () {
      for await (const m of a.messages()) {
        count(back, m)
        if (m.t === 'want' && m.probe === true) probed.push(m.path)
        yield m
      }
    },
  })
  const report = new SyncReport()
  const signal = new AbortController().signal
  await within(20_000, 'a push', Promise.all([
    runSender(tapped, { root: home, store: await openStore(t, home), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal }).then(() => a.close()),
    runReceiver(b, { root: work, store: await openStore(t, work), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal, now: () => new Date() }),
  ]))
  return { report, sent, back, probed }
}

t.test('a new file nothing here resembles goes whole after a probe, with no chunk list; a large one is not probed (its list is its record); the record is made from what was written', async (t) => {
  const big = randomBytes(1, 3_000_000)
  const small = randomBytes(2, 300_000)
  const home = await tempTree(t, { 'big.bin': big, 'small.bin': small, 'old.bin': randomBytes(3, 100_000) })
  const work = await tempTree(t, { 'old.bin': randomBytes(4, 100_000) })
  await utimes(join(work, 'old.bin'), PAST, PAST) // same size, older: changed
  const { report, sent, back, probed } = await pushOnce(t, home, work)
  t.same(probed, ['small.bin'], 'the new path is probed; the large one (no file of its size here) and the path that exists are not')
  t.equal(sent.get('probe'), 1)
  t.notOk(back.has('chunksWant'), 'no key found: no list asked for')
  t.equal(sent.get('chunks'), 2, 'old.bin, whose seed is known, and big.bin send their lists')
  t.equal(back.get('wholeWant'), 1, 'small.bin asked for whole')
  t.equal(back.get('plan'), 2, 'old.bin and big.bin are planned')
  t.match(report.events.find((e) => e.path === 'big.bin'), { action: 'new' })
  t.ok((await readFile(join(work, 'big.bin'))).equals(big))
  t.ok((await readFile(join(work, 'small.bin'))).equals(small))
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  const cut = cutterFor(SYNC_CHUNK_PARAMS)
  t.same(store.get('big.bin')?.chunks, sampleChunks(chunkBytes(big, cut)), 'the large one recorded as the sample its list came as')
  t.same(store.get('small.bin')?.chunks, chunkBytes(small, cut), 'the small one chunked in memory')
  await store.close()
})

t.test('a new file made mostly of one here: a key is found, the list follows, and it comes as a delta from that file', async (t) => {
  const base = randomBytes(5, 800_000)
  const edited = Buffer.concat([base.subarray(0, 400_000), randomBytes(6, 5000), base.subarray(400_000)])
  const home = await tempTree(t, { 'a.bin': base, 'moved/b.bin': edited })
  const work = await tempTree(t, { 'a.bin': base })
  await utimes(join(home, 'a.bin'), PAST, PAST)
  await utimes(join(work, 'a.bin'), PAST, PAST)
  const { report, sent, back, probed } = await pushOnce(t, home, work)
  t.same(probed, ['moved/b.bin'])
  t.equal(back.get('chunksWant'), 1, 'the list asked for after the probe')
  t.equal(sent.get('chunks'), 1)
  t.match(report.events.find((e) => e.path === 'moved/b.bin'), { action: 'delta', seed: 'a.bin' })
  t.ok((await readFile(join(work, 'moved/b.bin'))).equals(edited))
})

t.test('a copy at a new path: the probe carries the digest (a file of its size is here), and the copy is made here', async (t) => {
  const content = randomBytes(7, 500_000)
  const home = await tempTree(t, { 'a.bin': content, 'copy.bin': content })
  const work = await tempTree(t, { 'a.bin': content })
  await utimes(join(home, 'a.bin'), PAST, PAST)
  await utimes(join(work, 'a.bin'), PAST, PAST)
  const { report, sent, back } = await pushOnce(t, home, work)
  t.equal(back.get('want'), 1)
  t.equal(sent.get('probe'), 1)
  t.notOk(sent.has('chunks'), 'no list')
  t.notOk(sent.has('data'), 'no data')
  t.match(report.events.find((e) => e.path === 'copy.bin'), { action: 'copy', seed: 'a.bin' })
  t.ok((await readFile(join(work, 'copy.bin'))).equals(content))
})

t.test('a new file over 64 MiB is probed by windows: nothing read whole before it goes, no list, sent whole, recorded here by its size and time alone', async (t) => {
  const huge = randomBytes(11, WINDOWED_PROBE_BYTES + 3_000_000)
  const home = await tempTree(t, { 'huge.bin': huge })
  const work = await tempTree(t, { 'other.bin': randomBytes(12, 2_000_000) })
  const { report, sent, back, probed } = await pushOnce(t, home, work)
  t.same(probed, ['huge.bin'], 'probed although no file of its size is here')
  t.equal(sent.get('probe'), 1)
  t.notOk(sent.has('chunks'), 'no chunk list')
  t.notOk(back.has('chunksWant'), 'no key found')
  t.equal(back.get('wholeWant'), 1)
  t.match(report.events.find((e) => e.path === 'huge.bin'), { action: 'new' })
  t.ok((await readFile(join(work, 'huge.bin'))).equals(huge))
  const sender = await Store.open(home, { params: SYNC_CHUNK_PARAMS })
  t.equal(sender.get('huge.bin'), undefined, 'the sender made no record: it never chunked the file')
  await sender.close()
  const receiver = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.equal(receiver.get('huge.bin'), undefined, 'no chunk list recorded here (read when first needed as a seed)')
  // Checked with XXH3-128 on the way (PROTOCOL.md §4.11, test/sync/fast-check.ts): no digest.
  t.same(receiver.getBase('huge.bin'), { size: huge.length, mtimeMs: receiver.getBase('huge.bin')?.mtimeMs }, 'its base: size and time, no digest')
  await receiver.close()
})

t.test('a large file at a new path made mostly of one here is found by its windows, and comes as a delta', async (t) => {
  const base = randomBytes(13, WINDOWED_PROBE_BYTES + 1_000_000)
  const edited = Buffer.concat([base.subarray(0, 30_000_000), randomBytes(14, 70_000), base.subarray(30_000_000)])
  const home = await tempTree(t, { 'moved/b.bin': edited })
  const work = await tempTree(t, { 'a.bin': base })
  const { report, sent, back, probed } = await pushOnce(t, home, work)
  t.same(probed, ['moved/b.bin'])
  t.equal(sent.get('probe'), 1)
  t.equal(back.get('chunksWant'), 1, 'a key found: the list asked for')
  const ev = report.events.find((e) => e.path === 'moved/b.bin')
  t.match(ev, { action: 'delta', seed: 'a.bin' })
  t.ok((ev?.literalBytes ?? Infinity) < 1_000_000, `literals ${ev?.literalBytes} for a 70 KB insertion`)
  t.ok((await readFile(join(work, 'moved/b.bin'))).equals(edited))
})

t.test('a large file that changes while it is sent with no digest before: the receiver is told, writes nothing of it, and asks again', async (t) => {
  const huge = randomBytes(16, WINDOWED_PROBE_BYTES + 3_000_000)
  const home = await tempTree(t, { 'huge.bin': huge })
  const work = await tempTree(t, {})
  let appended = false
  const { report, sent } = await pushOnce(t, home, work, async (msg) => {
    if (msg.t === 'data' && !appended) {
      appended = true // the first piece is out; the rest is read after this
      await appendFile(join(home, 'huge.bin'), 'tail')
    }
  })
  t.ok(appended)
  t.equal(sent.get('notice'), 1, 'one SOURCE_CHANGED notice')
  t.equal(sent.get('chunks'), 1, 'asked again: its list this time (a retry is not probed), read whole on the sender')
  t.same(report.events.filter((e) => e.action === 'error'), [], 'no error: the second read was stable')
  t.ok((await readFile(join(work, 'huge.bin'))).equals(Buffer.concat([huge, Buffer.from('tail')])), 'the file as it is now')
})

t.test('probe windows: spread over the file, inside it, on block bounds for fixed-size blocks; none for files that are not large', async (t) => {
  t.equal(probeWindows(WINDOWED_PROBE_BYTES, SYNC_CHUNK_PARAMS), undefined, 'at the limit: read whole')
  const size = 1024 ** 3 + 12_345
  const w = probeWindows(size, SYNC_CHUNK_PARAMS)!
  t.equal(w.offsets.length, 16)
  t.equal(w.offsets[0], 0)
  t.equal(w.offsets.at(-1)! + w.bytes, size, 'the last window ends at the end')
  t.ok(w.offsets.every((o, i) => i === 0 || o > w.offsets[i - 1]! + w.bytes), 'windows do not overlap')
  const fsp = chunkParams({ kind: 'fsp', avg: 10_000 })
  t.ok(probeWindows(size, fsp)!.offsets.every((o) => o % 10_000 === 0), 'fixed-size blocks: offsets on block bounds')
  t.equal(probeWindows(200 * 1024 * 1024, chunkParams({ avg: 2 * 1024 * 1024 })), undefined, 'huge chunks: windows would read most of the file')
})

t.test('windowed keys are fingerprints of the file\'s own chunks that the index samples', async (t) => {
  const data = randomBytes(15, WINDOWED_PROBE_BYTES + 5_000_000)
  const home = await tempTree(t, { 'f.bin': data })
  const cut = cutterFor(SYNC_CHUNK_PARAMS)
  const keys = await windowedProbeKeys(join(home, 'f.bin'), probeWindows(data.length, SYNC_CHUNK_PARAMS)!, cut)
  const whole = new Set(sampleFingerprints(chunkBytes(data, cut)).map((fp) => fp.slice(0, 8)))
  const got: string[] = []
  for (let o = 0; o < keys.length; o += 4) got.push(Buffer.from(keys.subarray(o, o + 4)).toString('hex'))
  t.equal(got.length, 32)
  t.ok(got.every((k) => whole.has(k)), 'every key starts a sampled fingerprint of the whole file\'s chunks')
})

/** The receiver role on `root`, and a scripted sender's end of its channel. */
async function receiverOn(t: Test, root: string): Promise<{ peer: Channel; done: Promise<void>; report: SyncReport }> {
  const [mine, peer] = memoryChannelPair()
  const report = new SyncReport()
  const done = runReceiver(mine, { root, store: await openStore(t, root), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal: new AbortController().signal, now: () => new Date() })
  done.catch(() => undefined)
  return { peer, done, report }
}

const entry = (path: string, size: number) => ({ path, kind: 'file' as const, size, mtimeMs: PAST * 1000, mode: 0o644 })

async function wholeDelta(bytes: Uint8Array): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const b of encodeDelta(EMPTY_SIGNATURE, [bytes]).bytes) parts.push(b.slice())
  return Buffer.concat(parts)
}

t.test('a sender that predates probes answers with the list, and one may send a short list instead: both are taken as any list', async (t) => {
  const content = randomBytes(8, 400_000)
  const root = await tempTree(t)
  const { peer, done, report } = await receiverOn(t, root)
  await peer.send({ t: 'files', entries: [entry('n.bin', content.length)] })
  await peer.send({ t: 'filesEnd' })
  for await (const m of peer.messages()) {
    if (m.t === 'want') {
      t.equal(m.probe, true, 'asked for a probe')
      await peer.send({ t: 'chunks', id: m.id, size: content.length, chunks: chunkBytes(content, cutterFor(SYNC_CHUNK_PARAMS)), digest: digestBytes(content) })
    } else if (m.t === 'plan') {
      t.equal(m.method, 'whole')
      await peer.send({ t: 'data', id: m.id, bytes: await wholeDelta(content) })
      await peer.send({ t: 'dataEnd', id: m.id })
    } else if (m.t === 'done') break
  }
  peer.close()
  await done
  t.match(report.events.find((e) => e.path === 'n.bin'), { action: 'new' })
  t.ok((await readFile(join(root, 'n.bin'))).equals(content))
})

t.test('a hostile sender: a probe not asked for, a second probe, or a list after a probe not asked for end the session (BAD_MESSAGE)', async (t) => {
  const content = randomBytes(9, 400_000)
  const keys = new Uint8Array(8)
  for (const kase of ['unasked', 'twice', 'list'] as const) {
    // 'unasked': the path exists here, so the want asks for the list, not a probe.
    const root = await tempTree(t, kase === 'unasked' ? { 'n.bin': randomBytes(10, 1000) } : {})
    const { peer, done } = await receiverOn(t, root)
    await peer.send({ t: 'files', entries: [entry('n.bin', content.length)] })
    await peer.send({ t: 'filesEnd' })
    for await (const m of peer.messages()) {
      if (m.t !== 'want') continue
      await peer.send({ t: 'probe', id: m.id, size: content.length, keys })
      if (kase === 'twice') await peer.send({ t: 'probe', id: m.id, size: content.length, keys })
      if (kase === 'list') await peer.send({ t: 'chunks', id: m.id, size: content.length, chunks: chunkBytes(content, cutterFor(SYNC_CHUNK_PARAMS)), digest: digestBytes(content) })
      break
    }
    const why = { unasked: /probe for file id 1, which was not asked for one/, twice: /probe for file id 1, which was not asked/, list: /chunk list for file id 1 after its probe, not asked for/ }[kase]
    await t.rejects(within(10_000, kase, done), { code: 'BAD_MESSAGE', message: why }, kase)
  }
})

t.test('a hostile receiver: a list or the whole file asked for a file never probed, or asked twice, ends the session (BAD_MESSAGE)', async (t) => {
  const big = randomBytes(11, 1_000_000)
  for (const [kase, ask] of [['never probed', 'chunksWant'], ['twice', 'chunksWant'], ['never probed', 'wholeWant'], ['list, then whole', 'wholeWant']] as const) {
    const home = await tempTree(t, { 'big.bin': big })
    const [mine, peer] = memoryChannelPair()
    const sending = runSender(mine, { root: home, store: await openStore(t, home), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal })
    sending.catch(() => undefined)
    for await (const m of peer.messages()) {
      if (m.t === 'summary') await peer.send({ t: 'summaryWant', paths: m.dirs.map((d) => d.path) }) // list it all
      if (m.t === 'filesEnd') await peer.send({ t: 'want', id: 1, path: 'big.bin', probe: kase !== 'never probed' })
      if (m.t === 'chunks' || m.t === 'probe') {
        if (m.t === 'probe') {
          t.equal(m.keys.length, 8 * 4, '8 keys of 4 bytes')
          t.notOk(m.digest, 'no digest unless asked')
          const picked = probeFingerprints(chunkBytes(big, cutterFor(SYNC_CHUNK_PARAMS)), 8)
          t.same(Buffer.from(m.keys).toString('hex'), picked.map((fp) => fp.slice(0, 8)).join(''), 'the keys are the probe fingerprints\' prefixes')
          t.ok(picked.every((fp) => sampleFingerprints(chunkBytes(big, cutterFor(SYNC_CHUNK_PARAMS))).includes(fp)))
        }
        break
      }
    }
    if (kase !== 'never probed') await peer.send({ t: 'chunksWant', id: 1 })
    await peer.send({ t: ask, id: 1 })
    await t.rejects(within(10_000, kase, sending), { code: 'BAD_MESSAGE', message: new RegExp(`${ask} for file id 1, which was not answered with a probe`) }, `${kase}: ${ask}`)
  }
})

t.test('a large new file of a size some file here has is probed for its digest alone: a copy, or its list at once', async (t) => {
  const content = randomBytes(12, 3_000_000)
  const other = randomBytes(13, 3_000_000)
  const home = await tempTree(t, { 'a.bin': content, 'copy.bin': content, 'other.bin': other })
  const work = await tempTree(t, { 'a.bin': content })
  await utimes(join(home, 'a.bin'), PAST, PAST)
  await utimes(join(work, 'a.bin'), PAST, PAST)
  const { report, sent, back, probed } = await pushOnce(t, home, work)
  t.same(probed.sort(), ['copy.bin', 'other.bin'])
  t.match(report.events.find((e) => e.path === 'copy.bin'), { action: 'copy', seed: 'a.bin' })
  t.equal(back.get('chunksWant'), 1, 'other.bin: no copy, so its list, whatever its keys say')
  t.equal(sent.get('chunks'), 1)
  t.notOk(back.has('wholeWant'))
  t.ok((await readFile(join(work, 'other.bin'))).equals(other))
})

t.test('a file gone on the sender between its probe and its data (no data, then dataEnd) ends quietly on the receiver, as one gone before its want', async (t) => {
  const root = await tempTree(t)
  const { peer, done, report } = await receiverOn(t, root)
  await peer.send({ t: 'files', entries: [entry('gone.bin', 300_000)] })
  await peer.send({ t: 'filesEnd' })
  for await (const m of peer.messages()) {
    if (m.t === 'want') await peer.send({ t: 'probe', id: m.id, size: 300_000, keys: new Uint8Array(32) })
    else if (m.t === 'wholeWant') await peer.send({ t: 'dataEnd', id: m.id })
    else if (m.t === 'done') break
  }
  peer.close()
  await within(10_000, 'the receiver', done)
  t.same(report.events.filter((e) => e.action === 'error'), [], 'no error')
  t.notOk(report.events.some((e) => e.path === 'gone.bin'), 'no event for it')
  await t.rejects(readFile(join(root, 'gone.bin')), { code: 'ENOENT' }, 'nothing written for it')
})

t.test('a new file no file here resembles reads none of the small files here, which could not be its seed; a large one still is', async (t) => {
  const files: Record<string, Uint8Array> = { 'new.bin': randomBytes(10, 300_000) }
  const here: Record<string, Uint8Array> = {}
  for (let i = 0; i < 40; i++) here[`small/f${i}.txt`] = randomBytes(100 + i, 3_000)
  here['big-other.bin'] = randomBytes(99, 200_000)
  // The files here are not in the push's list (no --delete): only seeds, never read for themselves.
  const home = await tempTree(t, files)
  const work = await tempTree(t, here)
  const { report, sent } = await pushOnce(t, home, work)
  t.equal(sent.get('probe'), 1, 'the new file is probed')
  t.match(report.events.find((e) => e.path === 'new.bin'), { action: 'new' })
  const store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  const read = store.recordPaths().filter((p) => p !== 'new.bin')
  await store.close()
  // smallestSeedBytes(300,000, 0.5) is 25,000: a file of 3,000 bytes cannot be its seed, alone or
  // one of two. The 200,000-byte one could: it was read, and found no match.
  t.same(read, ['big-other.bin'], 'only the file that could be a seed was read for the content index')
})
