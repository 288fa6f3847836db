import t from 'tap'
import { memoryChannelPair, type Message } from '../../src/net/index.js'

t.test('memory pair: messages arrive once, in order, through the codec, and stats match both ways', async (t) => {
  const [a, b] = memoryChannelPair()
  const sent: Message[] = [
    { t: 'want', id: 1, path: 'a.txt' },
    { t: 'data', id: 1, bytes: new Uint8Array([1, 2, 3]) },
    { t: 'dataEnd', id: 1 },
  ]
  await Promise.all(sent.map((m) => a.send(m)))
  a.close()
  const got: Message[] = []
  for await (const m of b.messages()) got.push(m)
  t.strictSame(got, sent)
  t.ok(a.stats.bytesSent > 0)
  t.equal(a.stats.bytesSent, b.stats.bytesReceived)
})

t.test('memory pair: an error message surfaces as a DsyncError with its code', async (t) => {
  const [a, b] = memoryChannelPair()
  await a.send({ t: 'filesEnd' })
  await a.send({ t: 'error', code: 'CHANGED_ON_RECEIVER', message: 'x.txt changed on the receiver' })
  const got: Message[] = []
  await t.rejects(async () => {
    for await (const m of b.messages()) got.push(m)
  }, { code: 'CHANGED_ON_RECEIVER', message: 'x.txt changed on the receiver' })
  t.strictSame(got, [{ t: 'filesEnd' }], 'messages before the error are delivered first')
})

t.test('memory pair: an unknown error code from a newer peer keeps its text', async (t) => {
  const [a, b] = memoryChannelPair()
  await a.send({ t: 'error', code: 'FUTURE_CODE', message: 'from a newer peer' })
  await t.rejects(async () => {
    for await (const m of b.messages()) void m
  }, { code: 'INTERNAL', message: 'peer error FUTURE_CODE: from a newer peer' })
})

t.test('memory pair: an abnormal close is a NETWORK error; sending after close rejects', async (t) => {
  const [a, b] = memoryChannelPair()
  a.close(1011, 'crashed')
  await t.rejects(async () => {
    for await (const m of b.messages()) void m
  }, { code: 'NETWORK', message: /code 1011 \(crashed\)/ })
  await t.rejects(a.send({ t: 'filesEnd' }), { code: 'NETWORK' })
})

t.test('memory pair: a slow consumer holds the sender back at the queue limit', async (t) => {
  const [a, b] = memoryChannelPair({ maxQueuedBytes: 64 * 1024, maxQueuedMessages: 8, sendHighWaterBytes: 64 * 1024 })
  let sent = 0
  const sending = (async () => {
    for (let i = 0; i < 100; i++) {
      await a.send({ t: 'dataEnd', id: i })
      sent++
    }
    a.close()
  })()
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(sent <= 9, `the sender stopped at the limit (${sent} sent)`)
  const ids: number[] = []
  for await (const m of b.messages()) if (m.t === 'dataEnd') ids.push(m.id)
  await sending
  t.strictSame(ids, Array.from({ length: 100 }, (_, i) => i))
})
