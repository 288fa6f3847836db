import t, { type Test } from 'tap'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { DsyncError } from '../../src/errors.js'
import { memoryChannelPair, type Channel, type FileEntry, type Message } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { treeState } from '../support/hostile.js'
import { tempTree } from '../support/temp.js'

// PROTOCOL.md §4.13: a sender of version 10 lists at most a window of entries ahead of what
// the receiver has taken in; the receiver says how far it may go (`listRoom`). The window is
// 8,192 entries on the wire; here both roles are given 16, so that a few dozen files cross it.
const WINDOW = 16

async function roleDeps(t: Test, root: string, version?: number) {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  return {
    root, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal, listWindow: WINDOW, now: () => new Date(),
    ...(version !== undefined && { version }),
  }
}

/** `n` small files at the root, f00.txt …, each its own content. */
function files(n: number, prefix = 'f'): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${String(i).padStart(2, '0')}.txt`, `file ${i} of ${n}\n`.repeat(i + 1)]))
}

/** What a peer reads, in turns: each `quiet()` reads until nothing has come for `ms`. A read
 *  still waiting when one ends is the next one's first: no message is lost between them. */
function reader(channel: Channel, ms = 50) {
  const inbox = channel.messages()[Symbol.asyncIterator]()
  let pending: Promise<IteratorResult<Message>> | undefined
  return {
    async next(): Promise<Message | undefined> {
      const r = await (pending ?? inbox.next())
      pending = undefined
      return r.done === true ? undefined : r.value
    },
    async quiet(): Promise<Message[]> {
      const got: Message[] = []
      for (;;) {
        pending ??= inbox.next()
        const r = await Promise.race([pending, new Promise<'quiet'>((res) => setTimeout(() => res('quiet'), ms))])
        if (r === 'quiet') return got
        pending = undefined
        if (r.done === true) return got
        got.push(r.value)
      }
    },
  }
}

/** The entries listed in `messages`, and whether the list ended. */
function listed(messages: readonly Message[]): { entries: number; ended: boolean } {
  return { entries: messages.reduce((n, m) => n + (m.t === 'files' ? m.entries.length : 0), 0), ended: messages.some((m) => m.t === 'filesEnd') }
}

t.test('a sender of version 10 lists a window ahead, then as far as the receiver\'s listRoom allows', async (t) => {
  const root = await tempTree(t, files(40))
  const [mine, theirs] = memoryChannelPair()
  const sending = runSender(mine, await roleDeps(t, root))
  const peer = reader(theirs)
  t.match(await peer.next(), { t: 'summary', dirs: [{ path: '' }] }, 'the root offered by summary')
  await theirs.send({ t: 'summaryWant', paths: [''] })
  t.same(listed(await peer.quiet()), { entries: WINDOW, ended: false }, 'the window, and no more')
  await theirs.send({ t: 'listRoom', upTo: 30 })
  t.same(listed(await peer.quiet()), { entries: 30 - WINDOW, ended: false }, 'up to what listRoom allows')
  await theirs.send({ t: 'listRoom', upTo: 20 })
  t.same(listed(await peer.quiet()), { entries: 0, ended: false }, 'a listRoom below an earlier one allows nothing more')
  await theirs.send({ t: 'listRoom', upTo: 100 })
  t.same(listed(await peer.quiet()), { entries: 40 - 30, ended: true }, 'the rest, then the end of the list')
  await theirs.send({ t: 'done', summary: {} })
  await sending
})

t.test('to a receiver before version 10 the list goes unpaced', async (t) => {
  const root = await tempTree(t, files(40))
  const [mine, theirs] = memoryChannelPair()
  const sending = runSender(mine, await roleDeps(t, root, 9))
  const peer = reader(theirs)
  await peer.next() // the root's summary
  await theirs.send({ t: 'summaryWant', paths: [''] })
  t.same(listed(await peer.quiet()), { entries: 40, ended: true }, 'all of it at once, with no listRoom')
  // A listRoom is not of that session: it ends it.
  sending.catch(() => undefined)
  await theirs.send({ t: 'listRoom', upTo: 100 })
  await t.rejects(sending, { code: 'BAD_MESSAGE', message: /listRoom in a session of version 9/ })
})

/** A sender scripted on `theirs`: lists `entries` in one message; the listRooms that come. */
async function listTo(theirs: Channel, entries: FileEntry[]): Promise<number[]> {
  await theirs.send({ t: 'files', entries })
  return (await reader(theirs, 100).quiet()).flatMap((m) => (m.t === 'listRoom' ? [m.upTo] : []))
}

const entry = (path: string, size = 10): FileEntry => ({ path, kind: 'file', size, mtimeMs: 1_700_000_000_000, mode: 0o644 })

t.test('a receiver of version 10 ends a session whose sender lists past the window (BAD_MESSAGE), making nothing', async (t) => {
  const root = await tempTree(t)
  const [mine, theirs] = memoryChannelPair()
  const receiving = runReceiver(mine, await roleDeps(t, root))
  receiving.catch(() => undefined) // checked below
  await theirs.send({ t: 'files', entries: Array.from({ length: WINDOW + 1 }, (_, i) => entry(`n${i}.txt`)) })
  await t.rejects(receiving, { code: 'BAD_MESSAGE', message: /listed 17 entries where 16 were allowed/ })
  t.same((await readdir(root)).filter((n) => n !== '.dsync'), [], 'no file made')
})

t.test('a receiver gives room for what it has taken in, and none past its window of files waiting', async (t) => {
  // Files already here, the same: taken in at once, so the room moves on by each of them.
  const same = files(WINDOW)
  const root = await tempTree(t, same)
  const st = await Promise.all(Object.keys(same).map((p) => stat(join(root, p))))
  const [mine, theirs] = memoryChannelPair()
  const receiving = runReceiver(mine, await roleDeps(t, root))
  receiving.catch(() => undefined) // the channel is left open: it ends with the test
  t.same(await listTo(theirs, Object.keys(same).map((p, i) => ({ ...entry(p, st[i]!.size), mtimeMs: st[i]!.mtimeMs }))), [2 * WINDOW], 'all taken in: a window past them')
  // New files: each waits for its `want` (64 are asked at once here, so none wait) ...
  const [mine2, theirs2] = memoryChannelPair()
  const root2 = await tempTree(t)
  const receiving2 = runReceiver(mine2, await roleDeps(t, root2))
  receiving2.catch(() => undefined)
  t.same(await listTo(theirs2, Array.from({ length: WINDOW }, (_, i) => entry(`n${i}.txt`))), [2 * WINDOW], 'new files asked for at once are taken in too')
  mine.fail(new DsyncError('ABORTED', 'test over'))
  mine2.fail(new DsyncError('ABORTED', 'test over'))
})

t.test('push with a list many windows long: every file arrives, by both sides\' own roles', async (t) => {
  const tree: Record<string, string> = {}
  for (let d = 0; d < 6; d++) Object.assign(tree, Object.fromEntries(Object.entries(files(30, `d${d}/f`))))
  const home = await tempTree(t, tree)
  // The receiver has a third of them already (written apart: found the same by content).
  const work = await tempTree(t, Object.fromEntries(Object.entries(tree).filter((_, i) => i % 3 === 0)))
  const [a, b] = memoryChannelPair()
  const receiverDeps = await roleDeps(t, work)
  const sent: Message['t'][] = []
  const watched: Channel = new Proxy(b, { get: (o, k) => (k === 'send' ? (m: Message) => (sent.push(m.t), o.send(m)) : Reflect.get(o, k)) })
  const receiving = runReceiver(watched, receiverDeps)
  await runSender(a, await roleDeps(t, home))
  a.close() // as a client ends its session once the receiver is done
  await receiving
  t.same(await treeState(work).then(strip), await treeState(home).then(strip), 'the trees are the same')
  // 186 entries (180 files, 6 folders): past the first window, each listRoom allows at most a
  // window more.
  const rooms = sent.filter((m) => m === 'listRoom').length
  t.ok(rooms >= Math.ceil((186 - WINDOW) / WINDOW), `the receiver gave room ${rooms} times`)
})

/** A tree's state without dsync's own folder. */
function strip(state: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(state).filter(([p]) => p !== '.dsync' && !p.startsWith('.dsync/')))
}
