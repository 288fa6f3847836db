// Memory stays bounded whatever a peer sends (issue 7 item 4): a pusher that sends one file's
// chunk list as endless `more: true` pieces must be stopped with BAD_MESSAGE once the list is
// longer than the declared file size allows, long before it has sent much, and the server must
// go on serving a legitimate client.
import t from 'tap'
import { fingerprintFromBytes } from '../../src/hash/index.js'
import { LIMITS, type Message } from '../../src/net/index.js'
import { push } from '../../src/sync/index.js'
import type { Chunk } from '../../src/types.js'
import { fileEntry, hostileClient, treeState, within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

/** The most a hostile pusher may send before the server ends its session. */
const MAX_SENT = 16 * 1024 * 1024
/** How much the test sends at most when the server never stops it (bounded, so a failure is quick). */
const GIVE_UP_SENT = 24 * 1024 * 1024

async function endlessChunks(url: string, declaredSize: number, chunkLength: number): Promise<{ error?: { code?: string; message: string }; sent: number }> {
  const channel = await hostileClient(url)
  let ended: { code?: string; message: string } | undefined
  let wanted: (id: number) => void = () => undefined
  const want = new Promise<number>((r) => (wanted = r))
  const reader = (async () => {
    try {
      for await (const m of channel.messages()) if (m.t === 'want') wanted(m.id)
      ended = { message: 'closed normally' }
    } catch (err) {
      ended = err as { code?: string; message: string }
    }
    wanted(-1)
  })()
  await channel.send({ t: 'files', entries: [fileEntry('endless.bin', declaredSize, 1_700_000_000_000)] })
  await channel.send({ t: 'filesEnd' })
  const id = await within(5000, 'want for endless.bin', want).then((r) => r.value)
  const fps = randomBytes(5, 16 * 64)
  let offset = 0
  const started = Date.now()
  while (ended === undefined && id >= 0 && channel.stats.bytesSent < GIVE_UP_SENT && Date.now() - started < 15_000) {
    const chunks: Chunk[] = []
    for (let i = 0; i < LIMITS.maxChunksPerMessage; i++) {
      chunks.push({ offset, length: chunkLength, fp: fingerprintFromBytes(fps, (i % 64) * 16) })
      offset += chunkLength
    }
    const msg: Message = { t: 'chunks', id, size: declaredSize, chunks, more: true }
    try {
      await channel.send(msg)
    } catch {
      break // the server closed the session: the reader has its reason
    }
  }
  await within(5000, 'the hostile session to end', reader).catch(() => channel.close())
  return { ...(ended !== undefined && { error: ended }), sent: channel.stats.bytesSent }
}

t.test('an endless chunk list is refused within bounded traffic, and the server goes on', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'legit', 'b.bin': randomBytes(3, 200_000) })
  const work = await tempTree(t)
  const log: string[] = []
  const server = await startServer(t, work, { log })
  for (const [declared, length] of [[100 * 1024, 1], [1024 * 1024, 8192]] as const) {
    await t.test(`declared ${declared} bytes, chunks of ${length} bytes`, async (t) => {
      const r = await endlessChunks(server.url, declared, length)
      t.equal(r.error?.code, 'BAD_MESSAGE', `the session ended with BAD_MESSAGE (got ${r.error?.code}: ${r.error?.message})`)
      t.ok(r.sent < MAX_SENT, `ended after ${r.sent} bytes sent (limit ${MAX_SENT})`)
      const { ms } = await within(5000, 'a legitimate push after the endless list', push(home, server.url, clientOpts()))
      t.ok(ms < 5000, `legitimate push done in ${ms} ms`)
      t.same(await treeState(work), await treeState(home), 'the legitimate push was applied')
    })
  }
})
