import t, { type Test } from 'tap'
import { readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { chunkBytes, cutterFor } from '../../src/chunk/index.js'
import { EMPTY_SIGNATURE, encodeDelta, storedDelta } from '../../src/delta/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { decode, encode, memoryChannelPair, type Channel, type FileEntry, type Message } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { push, runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { BundleReader } from '../../src/sync/bundle.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { within } from '../support/hostile.js'
import { tempTree } from '../support/temp.js'

const HOUR_AGO = Date.now() - 3_600_000

async function openStore(t: Test, root: string): Promise<Store> {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  return store
}

/** The receiver role on `root`, talking to the returned channel end (a scripted sender). */
async function receiverOn(t: Test, root: string): Promise<{ peer: Channel; done: Promise<void>; report: SyncReport }> {
  const store = await openStore(t, root)
  const [mine, peer] = memoryChannelPair()
  const report = new SyncReport()
  const done = runReceiver(mine, { root, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal: new AbortController().signal, now: () => new Date() })
  done.catch(() => undefined) // awaited by each test
  return { peer, done, report }
}

function fileEntry(path: string, bytes: Uint8Array): FileEntry {
  return { path, kind: 'file', size: bytes.length, mtimeMs: HOUR_AGO, mode: 0o644 }
}

/** A whole-file delta of `bytes`, as the sender streams it. */
async function wholeDelta(bytes: Uint8Array): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const b of encodeDelta(EMPTY_SIGNATURE, [bytes]).bytes) parts.push(b.slice())
  return Buffer.concat(parts)
}

/** Plays the sender of a receiver test on `peer` until the receiver's `done` (at most 10 s: a
 *  session that never ends fails the test instead of hanging it), then closes it.
 *  A want is answered by `answer` when it returns true (a case's own reply), else whole at once
 *  when it says `whole` (unless the sender is `old`: its codec drops the key), else with the
 *  file's list; a plan with the file whole. `content(path)` is what the file holds now. */
async function playSender(
  peer: Channel,
  content: (path: string) => Uint8Array,
  o: { old?: boolean; answer?: (want: Extract<Message, { t: 'want' }>) => Promise<boolean> } = {},
): Promise<{ wants: Extract<Message, { t: 'want' }>[]; plans: Extract<Message, { t: 'plan' }>[] }> {
  const wants: Extract<Message, { t: 'want' }>[] = []
  const plans: Extract<Message, { t: 'plan' }>[] = []
  const byId = new Map<number, string>()
  const sendWhole = async (id: number, path: string) => {
    await peer.send({ t: 'data', id, bytes: await wholeDelta(content(path)) })
    await peer.send({ t: 'dataEnd', id })
  }
  const play = async (): Promise<void> => {
    for await (const m of peer.messages()) {
      if (m.t === 'want') {
        wants.push(m)
        byId.set(m.id, m.path)
        if (o.answer !== undefined && (await o.answer(m))) continue
        const bytes = content(m.path)
        if (m.whole === true && o.old !== true) await sendWhole(m.id, m.path) // no list and no plan
        else await peer.send({ t: 'chunks', id: m.id, size: bytes.length, chunks: chunkBytes(bytes, cutterFor(SYNC_CHUNK_PARAMS)), digest: digestBytes(bytes) })
      } else if (m.t === 'plan') {
        plans.push(m)
        await sendWhole(m.id, byId.get(m.id)!)
      } else if (m.t === 'done') {
        return
      }
    }
  }
  try {
    await within(10_000, 'the receiver\'s session', play())
  } finally {
    peer.close()
  }
  return { wants, plans }
}

t.test('want.whole round-trips through the codec, and is left out when false', async (t) => {
  t.same(decode(encode({ t: 'want', id: 3, path: 'a/b.txt', whole: true })), { t: 'want', id: 3, path: 'a/b.txt', whole: true })
  t.same(decode(encode({ t: 'want', id: 3, path: 'a/b.txt' })), { t: 'want', id: 3, path: 'a/b.txt' })
})

t.test('the receiver asks whole only for a new file of at most 4 chunks no local file can seed, and writes it from the data alone', async (t) => {
  const same = randomBytes(1, 700)
  const root = await tempTree(t, { 'old/same-size.bin': randomBytes(2, 900), 'old/named.txt': 'some earlier text' })
  const { peer, done, report } = await receiverOn(t, root)
  const files = {
    'new/small.bin': same, // one chunk, no file of its size, no file of its name: whole
    'new/four.bin': randomBytes(5, 8000), // ≤ 4 chunks of the minimum size (2 KiB), likewise: whole
    'new/sized.bin': randomBytes(3, 900), // a local file has its size (a copy could be it): list
    'new/named.txt': Buffer.from('a later text'), // a local file has its name (a move?): list
    'new/big.bin': randomBytes(4, 9000), // over 4 chunks' minimum (8 KiB): list
  }
  await peer.send({ t: 'files', entries: [{ path: 'new', kind: 'dir', size: 0, mtimeMs: HOUR_AGO, mode: 0o755 }, ...Object.entries(files).map(([p, b]) => fileEntry(p, b))] })
  await peer.send({ t: 'filesEnd' })
  const { wants } = await playSender(peer, (path) => files[path as keyof typeof files])
  await done
  t.same(wants.filter((w) => w.whole === true).map((w) => w.path).sort(), ['new/four.bin', 'new/small.bin'], 'only the small files with no possible copy or earlier version are asked for whole')
  for (const [p, b] of Object.entries(files)) t.ok((await readFile(join(root, p))).equals(b), `${p} written exactly`)
  t.match(report.events.find((e) => e.path === 'new/small.bin'), { action: 'new', size: 700 })
  // Its record was made from the bytes written: a later session knows it without reading it.
  const store = await openStore(t, root)
  t.same(store.get('new/small.bin')?.chunks.map((c) => c.length), [700], 'recorded with its one chunk')
  t.equal(store.get('new/small.bin')?.digest, digestBytes(same))
})

t.test('a sender that predates want.whole answers it with a chunk list: the receiver plans it whole and it arrives', async (t) => {
  const root = await tempTree(t)
  const { peer, done } = await receiverOn(t, root)
  const bytes = Buffer.from('small and new\n')
  await peer.send({ t: 'files', entries: [fileEntry('a.txt', bytes)] })
  await peer.send({ t: 'filesEnd' })
  // An old sender ignores `whole` (its codec drops the field) and sends the list.
  const { wants, plans } = await playSender(peer, () => bytes, { old: true })
  await done
  t.equal(wants[0]?.whole, true, 'asked whole')
  t.match(plans, [{ method: 'whole', seed: null, signature: null }], 'the plan an old sender waits for')
  t.same(await readFile(join(root, 'a.txt')), bytes)
})

for (const version of [2, 3]) {
  const how = version === 2 ? 'in data messages' : 'in a bundle (version 3)'
  t.test(`the sender answers want.whole with the data alone, ${how}; a file gone since the walk ends quietly; an unlisted path ends the session`, async (t) => {
    const home = await tempTree(t, { 'a.txt': 'alpha\n', 'gone.txt': 'soon gone\n' })
    await utimes(join(home, 'a.txt'), HOUR_AGO / 1000, HOUR_AGO / 1000)
    const store = await openStore(t, home)
    const [mine, peer] = memoryChannelPair()
    const report = new SyncReport()
    const sending = runSender(mine, { root: home, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal: new AbortController().signal, version })
    sending.catch(() => undefined)
    const seen: Message[] = []
    const ended = (): boolean => seen.filter((x) => x.t === 'dataEnd' || x.t === 'bundle').length === 2
    for await (const m of peer.messages()) {
      if (m.t === 'summary') await peer.send({ t: 'summaryWant', paths: m.dirs.map((d) => d.path) }) // list it all
      if (m.t === 'filesEnd') {
        await rm(join(home, 'gone.txt'))
        await peer.send({ t: 'want', id: 1, path: 'a.txt', whole: true })
        await peer.send({ t: 'want', id: 2, path: 'gone.txt', whole: true })
      } else if (m.t !== 'files') {
        seen.push(m)
        if (ended()) break
      }
    }
    const alpha = Buffer.from('alpha\n')
    if (version === 2) {
      t.same(seen.map((m) => m.t), ['data', 'dataEnd', 'dataEnd'], 'no chunk list and no notice: data for a.txt, nothing for the vanished file')
      const data = seen[0] as Extract<Message, { t: 'data' }>
      t.same(data.bytes, await wholeDelta(alpha), 'the whole-file delta of a.txt')
    } else {
      t.same(seen.map((m) => m.t).sort(), ['bundle', 'dataEnd'], 'no chunk list, no data and no notice: a bundle for a.txt, nothing for the vanished file')
      t.match(seen.find((m) => m.t === 'dataEnd'), { id: 2 })
      const bundle = seen.find((m) => m.t === 'bundle') as Extract<Message, { t: 'bundle' }>
      t.same(new BundleReader().unpack(bundle).map((s) => [s.id, Buffer.from(s.bytes)]), [[1, Buffer.concat(storedDelta(alpha, digestBytes(alpha)))]], 'the whole-file stream of a.txt')
    }
    t.equal(store.get('a.txt'), undefined, 'the sender did not chunk the file for a record')

    await peer.send({ t: 'want', id: 3, path: 'not-listed.txt', whole: true })
    await t.rejects(sending, { code: 'BAD_MESSAGE' }, 'a path outside the list is refused')
  })
}

t.test('a first push of small new files asks for them whole, and a second push reads and sends nothing', async (t) => {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < 40; i++) files[`d${i % 4}/f${i}.txt`] = randomBytes(100 + i, 200 + 37 * i)
  const home = await tempTree(t, files)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  const first = await push(home, server.url, clientOpts())
  t.equal(first.events.filter((e) => e.action === 'new').length, 40)
  for (const [p, b] of Object.entries(files)) if (!(await readFile(join(work, p))).equals(b)) t.fail(`${p} differs`)
  const homeStore = await openStore(t, home)
  t.equal(Object.keys(files).filter((p) => homeStore.get(p) !== undefined).length, 0, 'no file was chunked on the sender: each was asked for whole')
  await homeStore.close()
  const second = await push(home, server.url, clientOpts())
  t.equal(second.events.filter((e) => e.action !== 'unchanged' && e.action !== 'dir').length, 0, 'the second push changes nothing')
  t.equal(second.summary.filesRead, 0, 'and reads no file')
})

t.test('a file sent whole is hashed once, for its list: changed before its data, the receiver sees it and asks again', async (t) => {
  const { wrapChannel } = await import('../../src/net/index.js')
  // Over 1 MiB: not kept in memory from its read for the list, so read again to be sent.
  const v1 = randomBytes(21, 1_500_000)
  const v2 = randomBytes(22, 1_500_000) // same size and mtime: only the bytes tell
  const home = await tempTree(t, { 'big.bin': v1 })
  await utimes(join(home, 'big.bin'), HOUR_AGO / 1000, HOUR_AGO / 1000)
  const work = await tempTree(t)
  const [a, b] = memoryChannelPair()
  let changed = false
  let wants = 0
  // Between the list (digest of v1) and the data, the file becomes v2.
  const senderSide = wrapChannel(a, {
    send: async (msg) => {
      if (msg.t === 'chunks' && msg.digest !== undefined && !changed) {
        changed = true
        await writeFile(join(home, 'big.bin'), v2)
        await utimes(join(home, 'big.bin'), HOUR_AGO / 1000, HOUR_AGO / 1000)
      }
      return a.send(msg)
    },
    messages: async function* () {
      for await (const m of a.messages()) {
        if (m.t === 'want') wants++
        yield m
      }
    },
  })
  const signal = new AbortController().signal
  const report = new SyncReport()
  await Promise.all([
    // The sender's end closes when it is done, as a session does.
    runSender(senderSide, { root: home, store: await openStore(t, home), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal }).then(() => a.close()),
    runReceiver(b, { root: work, store: await openStore(t, work), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal, now: () => new Date() }),
  ])
  t.ok(changed, 'the file changed after its list went out')
  t.equal(wants, 2, 'the receiver asked again')
  t.ok((await readFile(join(work, 'big.bin'))).equals(Buffer.from(v2)), 'and wrote the file as it is now, never the mix')
  t.match(report.events.find((e) => e.path === 'big.bin'), { action: 'new' })
})

t.test('a file asked for whole must be the size it was listed with: more is cut off at once, and asked for again with a list', async (t) => {
  const root = await tempTree(t)
  const { peer, done } = await receiverOn(t, root)
  const listed = randomBytes(31, 700)
  const now = randomBytes(32, 50_000) // it grew on the sender since the list (or the sender lies)
  await peer.send({ t: 'files', entries: [fileEntry('f.bin', listed)] })
  await peer.send({ t: 'filesEnd' })
  const { wants } = await playSender(peer, () => now)
  await done
  t.same(wants.map((w) => w.whole === true), [true, false], 'asked whole, then again for its list')
  t.ok((await readFile(join(root, 'f.bin'))).equals(Buffer.from(now)), 'written as it is now')
})

t.test('a sender that predates want.whole and cannot read the file answers with an empty list: the receiver ends the file, not the session', async (t) => {
  const root = await tempTree(t)
  const { peer, done, report } = await receiverOn(t, root)
  const ok = Buffer.from('readable\n')
  await peer.send({ t: 'files', entries: [fileEntry('locked.txt', Buffer.from('unreadable\n')), fileEntry('ok.txt', ok)] })
  await peer.send({ t: 'filesEnd' })
  await playSender(peer, () => ok, {
    old: true,
    answer: async (m) => {
      if (m.path !== 'locked.txt') return false
      // As an old sender does for a file it cannot read: a notice, then a list with no digest.
      await peer.send({ t: 'notice', message: 'locked.txt: permission denied', path: 'locked.txt', code: 'IO' })
      await peer.send({ t: 'chunks', id: m.id, size: 0, chunks: [] })
      return true
    },
  })
  await done
  t.ok((await readFile(join(root, 'ok.txt'))).equals(ok), 'the other file is written')
  await t.rejects(readFile(join(root, 'locked.txt')), 'the unreadable one is not')
  t.match(report.events.filter((e) => e.path === 'locked.txt'), [{ action: 'error', code: 'IO' }], 'one error line for it, from the notice')
})

t.test('a receiver flooding the sender with plans, planning a file twice, or asking a sketch twice, ends the session (BAD_MESSAGE) instead of growing its queues', async (t) => {
  const big = randomBytes(41, 4 * 1024 * 1024)
  for (const flood of ['plans', 'twice', 'sketches'] as const) {
    const home = await tempTree(t, { 'big.bin': big })
    const [mine, peer] = memoryChannelPair()
    const sending = runSender(mine, { root: home, store: await openStore(t, home), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal })
    sending.catch(() => undefined)
    for await (const m of peer.messages()) {
      if (m.t === 'summary') await peer.send({ t: 'summaryWant', paths: m.dirs.map((d) => d.path) }) // list it all
      if (m.t === 'filesEnd') await peer.send({ t: 'want', id: 1, path: 'big.bin' })
      if (m.t === 'chunks' && m.more !== true) break
    }
    if (flood === 'plans') {
      // Never reading the data: each send of the 4 MiB file (asked for whole, under new ids)
      // waits, and the rest pile up.
      for (let i = 2; i < 1100; i++) void peer.send({ t: 'want', id: i, path: 'big.bin', whole: true }).catch(() => undefined)
    } else if (flood === 'twice') {
      // A second plan for a file before the first was sent would run a second exchange.
      await peer.send({ t: 'plan', id: 1, method: 'whole', seed: null, similarity: 0, signature: null })
      await peer.send({ t: 'plan', id: 1, method: 'whole', seed: null, similarity: 0, signature: null })
    } else {
      await peer.send({ t: 'sketchWant', id: 1 })
      await peer.send({ t: 'sketchWant', id: 1 })
    }
    const why = { plans: /more than 1024 files/, twice: /a second plan for file id 1/, sketches: /sketch asked twice/ }[flood]
    await t.rejects(sending, { code: 'BAD_MESSAGE', message: why }, flood)
  }
})

t.test('a bundle waiting for more small files goes once the receiver is quiet (it waits for the sender), not after its whole hold', async (t) => {
  const files = { 'a.txt': randomBytes(51, 3000), 'b.txt': randomBytes(52, 3000), 'c.txt': randomBytes(53, 3000), 'd.txt': randomBytes(54, 3000) }
  const home = await tempTree(t, files)
  const [mine, peer] = memoryChannelPair()
  // A hold of a minute: a bundle sent only when it ran out would fail `within` below.
  const sending = runSender(mine, { root: home, store: await openStore(t, home), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal, bundleHoldMs: 60_000 })
  sending.catch(() => undefined)
  const bundled: number[] = []
  await within(10_000, 'the bundled files', (async () => {
    for await (const m of peer.messages()) {
      if (m.t === 'summary') await peer.send({ t: 'summaryWant', paths: m.dirs.map((d) => d.path) })
      if (m.t === 'filesEnd') {
        // d.txt's list is asked for and never planned: the sender cannot know no plan is coming,
        // so a bundle of the others waits for it.
        await peer.send({ t: 'want', id: 4, path: 'd.txt' })
        for (const [i, path] of ['a.txt', 'b.txt', 'c.txt'].entries()) await peer.send({ t: 'want', id: i + 1, path, whole: true })
      }
      if (m.t === 'bundle') bundled.push(...m.streams.map((s) => s.id))
      if (bundled.length === 3) return
    }
  })())
  t.same(bundled.sort(), [1, 2, 3], 'the three files asked for whole came bundled, long before the hold ended')
  peer.close()
})
