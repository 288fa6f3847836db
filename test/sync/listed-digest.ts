/**
 * One read per changed file per side (issue 8): the sender ends a delta with the digest its
 * list carried (no second hash), and the receiver reads the file it has at the path (its first
 * seed) while the sender lists.
 */
import t, { type Test } from 'tap'
import { readFile, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { memoryChannelPair, wrapChannel, type Message, type MessageTag } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'

const PAST = (Date.now() - 3_600_000) / 1000

async function openStore(t: Test, root: string): Promise<Store> {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  return store
}

/** Both roles in one process, home → work; `onSend` sees each of the sender's messages before
 *  it goes; what the receiver sent back is counted by type. */
async function pushOnce(t: Test, home: string, work: string, workStore: Store, onSend: (msg: Message) => Promise<void>) {
  const [a, b] = memoryChannelPair()
  const back = new Map<MessageTag, number>()
  const tapped = wrapChannel(a, {
    send: async (msg) => {
      await onSend(msg)
      return a.send(msg)
    },
    messages: async function* () {
      for await (const m of a.messages()) {
        back.set(m.t, (back.get(m.t) ?? 0) + 1)
        yield m
      }
    },
  })
  const report = new SyncReport()
  const signal = new AbortController().signal
  await within(20_000, 'a push', Promise.all([
    runSender(tapped, { root: home, store: await openStore(t, home), params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal }).then(() => a.close()),
    runReceiver(b, { root: work, store: workStore, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal, now: () => new Date() }),
  ]))
  return { report, back }
}

for (const keepMtime of [false, true]) {
  t.test(`a file changed after its list went out${keepMtime ? ', its size and mtime kept' : ''}: it arrives as it is now, no error`, async (t) => {
    const old = Buffer.from(randomBytes(61, 2_000_000)) // over 1 MiB: read again to be sent (a smaller one goes from what its list read)
    const listed = Buffer.from(old)
    listed.set(randomBytes(62, 100), 1_500_000)
    const now = Buffer.from(listed)
    now.set(randomBytes(63, 100), 20_000) // same size: only the content says it changed
    const home = await tempTree(t, { 'f.bin': listed })
    const work = await tempTree(t, { 'f.bin': old })
    await utimes(join(work, 'f.bin'), PAST, PAST)
    await utimes(join(home, 'f.bin'), PAST + 60, PAST + 60)
    let changed = false
    const { report, back } = await pushOnce(t, home, work, await openStore(t, work), async (msg) => {
      if (msg.t === 'chunks' && !changed) {
        changed = true
        await writeFile(join(home, 'f.bin'), now)
        if (keepMtime) await utimes(join(home, 'f.bin'), PAST + 60, PAST + 60)
      }
    })
    t.ok(changed)
    if (!keepMtime) {
      // Seen changed by its stat, it is hashed as read: the receiver asks again at once (a new
      // list, then a plan); with the listed digest it would have asked for it whole first.
      t.equal(back.get('plan'), 2, `a plan, then one for the new list: ${JSON.stringify([...back])}`)
    } else {
      // The sender cannot tell: the delta ends with the listed digest and fails the receiver's
      // check, which asks for it whole, then again for its list.
      t.ok(back.get('plan')! >= 2, `asked again: ${JSON.stringify([...back])}`)
    }
    t.same(report.events.filter((e) => e.action === 'error'), [], 'no error')
    t.ok((await readFile(join(work, 'f.bin'))).equals(now), 'the file as it is now')
  })
}

t.test('the receiver reads the file it has at the path while the sender lists, not after', async (t) => {
  const old = Buffer.from(randomBytes(64, 2_000_000))
  const edited = Buffer.from(old)
  edited.set(randomBytes(65, 64), 1_000_000)
  const home = await tempTree(t, { 'f.bin': edited })
  const work = await tempTree(t, { 'f.bin': old })
  await utimes(join(work, 'f.bin'), PAST, PAST)
  const workStore = await openStore(t, work)
  t.equal(workStore.get('f.bin'), undefined, 'no record of it here before the sync')
  let readBeforeList = false
  const { report } = await pushOnce(t, home, work, workStore, async (msg) => {
    if (msg.t !== 'chunks') return
    // Held back until the receiver has read its own file (it has not seen this list yet).
    for (let i = 0; i < 500 && !readBeforeList; i++) {
      readBeforeList = workStore.get('f.bin')?.size === old.length
      if (!readBeforeList) await new Promise((r) => setTimeout(r, 10))
    }
  })
  t.ok(readBeforeList, 'the record of its own f.bin was made before the sender\'s list came')
  t.match(report.events.find((e) => e.path === 'f.bin'), { action: 'delta', seed: 'f.bin' })
  t.ok((await readFile(join(work, 'f.bin'))).equals(edited), 'rebuilt exactly')
})
