import t from 'tap'
import { Packr } from 'msgpackr'
import { decode, encode, memoryChannelPair, withBatching, type Channel, type Message } from '../../src/net/index.js'

/** The next `n` messages as they arrived (a `batch` still whole). */
async function take(channel: Channel, n: number): Promise<Message[]> {
  const got: Message[] = []
  for await (const m of channel.messages()) {
    got.push(m)
    if (got.length === n) break
  }
  return got
}

const want = (id: number): Message => ({ t: 'want', id, path: `dir/file-${id}.txt` })

t.test('small messages of one turn go as one batch frame, in order; any other message first sends them', async (t) => {
  const [a, b] = memoryChannelPair()
  const batched = withBatching(a)
  await Promise.all([batched.send(want(1)), batched.send(want(2)), batched.send(want(3))])
  await batched.send({ t: 'data', id: 1, bytes: new Uint8Array(10) })
  await batched.send({ t: 'result', id: 1, path: 'dir/file-1.txt', action: 'new', ok: true })
  await batched.send({ t: 'done', summary: {} })
  const raw = await take(b, 4)
  t.same(raw.map((m) => m.t), ['batch', 'data', 'result', 'done'], 'three wants in one frame; a lone small message goes as it is')
  t.same((raw[0] as Extract<Message, { t: 'batch' }>).messages, [want(1), want(2), want(3)])
})

t.test('a batch received is handed on message by message', async (t) => {
  const [a, b] = memoryChannelPair()
  const receiving = withBatching(b)
  await a.send({ t: 'batch', messages: [want(1), want(2)] })
  await a.send({ t: 'dataEnd', id: 9 })
  t.same(await take(receiving, 3), [want(1), want(2), { t: 'dataEnd', id: 9 }])
})

t.test('closing sends what is queued first', async (t) => {
  const [a, b] = memoryChannelPair()
  const batched = withBatching(a)
  await batched.send(want(1))
  await batched.send(want(2))
  batched.close()
  t.same((await take(b, 1)).map((m) => (m.t === 'batch' ? m.messages.length : m.t)), [2])
})

t.test('paths and keys compress in a batch: 64 wants cost a fraction of 64 frames', async (t) => {
  const wants = Array.from({ length: 64 }, (_, i) => want(1000 + i))
  const alone = wants.reduce((a, m) => a + encode(m).length, 0)
  const together = encode({ t: 'batch', messages: wants }).length
  t.ok(together < alone / 3, `${together} B batched, ${alone} B alone`)
})

t.test('a malformed batch is BAD_MESSAGE: nested, too short, too long, or holding a bad message', async (t) => {
  const packr = new Packr({ useRecords: false })
  const frame = (items: unknown[]): Uint8Array => {
    const raw = packr.pack(items)
    return packr.pack({ t: 'batch', codec: 0, raw: raw.length, z: raw })
  }
  const one = encode(want(1))
  t.same(decode(frame([one, encode(want(2))])), { t: 'batch', messages: [want(1), want(2)] })
  t.throws(() => decode(frame([one])), { code: 'BAD_MESSAGE', message: /at least 2/ })
  t.throws(() => decode(frame([one, frame([one, one])])), { code: 'BAD_MESSAGE', message: /'batch', which travels alone/ }, 'batches do not nest')
  t.throws(() => decode(frame([one, 'text'])), { code: 'BAD_MESSAGE', message: /z\[1\]/ })
  t.throws(() => decode(frame([one, packr.pack({ t: 'want', id: -1, path: 'a' })])), { code: 'BAD_MESSAGE', message: /want.*id/ })
  t.throws(() => decode(frame(Array.from({ length: 4097 }, () => one))), { code: 'BAD_MESSAGE', message: /4097/ })
  t.throws(() => encode({ t: 'batch', messages: [{ t: 'batch', messages: [] }] }), { code: 'INTERNAL' })
})

t.test('a batch holds only small messages: a file list in one is BAD_MESSAGE (it would unpack 4 MiB from a few bytes)', async (t) => {
  const packr = new Packr({ useRecords: false })
  const inner = [encode(want(1)), encode({ t: 'files', entries: [] })]
  const raw = packr.pack(inner)
  t.throws(() => decode(packr.pack({ t: 'batch', codec: 0, raw: raw.length, z: raw })), { code: 'BAD_MESSAGE', message: /'files', which travels alone/ })
})

t.test('many large small messages go in as many batches as their size needs, none lost', async (t) => {
  const [a, b] = memoryChannelPair()
  const batched = withBatching(a)
  const n = 300
  for (let i = 0; i < n; i++) await batched.send({ t: 'result', id: i + 1, path: `p/${'x'.repeat(200)}-${i}`, action: 'error', ok: false, code: 'IO', message: 'y'.repeat(4000) })
  await batched.send({ t: 'done', summary: {} })
  const got: Message[] = []
  for await (const m of withBatching(b).messages()) {
    got.push(m)
    if (m.t === 'done') break
  }
  t.equal(got.length, n + 1, 'every result, then done')
  t.same(got.slice(0, n).map((m) => (m as Extract<Message, { t: 'result' }>).id), Array.from({ length: n }, (_, i) => i + 1), 'in order')
})
