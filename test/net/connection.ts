import t from 'tap'
import { WsChannel } from '../../src/net/connection.js'
import { allocWithHeadroom, POOLED_BYTES, pooledCount } from '../../src/headroom.js'
import { connect, LIMITS, type ChannelLimits } from '../../src/net/index.js'
import { randomBytes } from '../support/random.js'
import { OPTIONS, testServer } from '../support/net.js'

const MiB = 1024 * 1024
const LIMITS_SMALL: ChannelLimits = { maxQueuedBytes: 2 * MiB, maxQueuedMessages: 64, sendHighWaterBytes: 1 * MiB }
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

t.test('backpressure: a slow consumer of 100 MiB keeps the queue and send buffer bounded, and send waits', async (t) => {
  const total = 100
  const payload = randomBytes(42, MiB)
  let maxBuffered = 0
  let sent = 0
  let received = 0
  let maxAhead = 0
  const server = await testServer(t, async (channel) => {
    if (!(channel instanceof WsChannel)) throw new Error('expected a WsChannel')
    for (let i = 0; i < total; i++) {
      await channel.send({ t: 'data', id: 1, bytes: payload })
      sent++
      maxBuffered = Math.max(maxBuffered, channel.bufferedAmount)
      maxAhead = Math.max(maxAhead, sent - received)
    }
    await channel.send({ t: 'dataEnd', id: 1 })
  }, { limits: LIMITS_SMALL })
  const { channel } = await connect(server.url, { token: null, role: 'pull', options: OPTIONS, limits: LIMITS_SMALL })
  if (!(channel instanceof WsChannel)) throw new Error('expected a WsChannel')
  let maxQueued = 0
  let bytes = 0
  for await (const m of channel.messages()) {
    maxQueued = Math.max(maxQueued, channel.queuedBytes)
    if (m.t === 'data') {
      bytes += m.bytes.length
      received++
      if (received === 1) t.ok(Buffer.from(m.bytes).equals(payload), 'bytes arrive intact')
      // 5 ms per MiB: a 200 MB/s consumer, slower than loopback, so the sender must wait.
      await sleep(5)
    }
  }
  t.equal(bytes, total * MiB)
  // ws may still hand over frames it had parsed from the last socket read after a pause.
  t.ok(maxQueued <= LIMITS_SMALL.maxQueuedBytes + LIMITS.maxFrameBytes, `receiver queue peaked at ${(maxQueued / MiB).toFixed(1)} MiB`)
  t.ok(maxBuffered <= LIMITS_SMALL.sendHighWaterBytes + 2 * MiB, `sender buffer peaked at ${(maxBuffered / MiB).toFixed(1)} MiB`)
  // Kernel socket buffers on loopback hold a few MiB more; the rest of the 100 MiB had to wait.
  t.ok(maxAhead < 40, `the sender ran at most ${maxAhead} MiB ahead of the consumer`)
  t.equal(channel.stats.bytesReceived > total * MiB, true, 'stats count frame bytes')
})

t.test('backpressure: a stalled consumer pauses the socket; concurrent sends wait before encoding', async (t) => {
  const total = 60
  const payload = randomBytes(7, MiB)
  let sent = 0
  let maxBuffered = 0
  let sender!: WsChannel
  const server = await testServer(t, async (channel) => {
    if (!(channel instanceof WsChannel)) throw new Error('expected a WsChannel')
    sender = channel
    // All sends at once, none awaited in turn: only the high-water mark holds them back.
    await Promise.all(Array.from({ length: total }, async () => {
      await channel.send({ t: 'data', id: 2, bytes: payload })
      sent++
      maxBuffered = Math.max(maxBuffered, channel.bufferedAmount)
    }))
    await channel.send({ t: 'dataEnd', id: 2 })
  }, { limits: LIMITS_SMALL })
  const { channel } = await connect(server.url, { token: null, role: 'pull', options: OPTIONS, limits: LIMITS_SMALL })
  if (!(channel instanceof WsChannel)) throw new Error('expected a WsChannel')
  await sleep(400)
  const queuedWhileStalled = channel.queuedBytes
  const sentWhileStalled = sent
  t.ok(queuedWhileStalled >= LIMITS_SMALL.maxQueuedBytes, `the queue filled to its limit (${(queuedWhileStalled / MiB).toFixed(1)} MiB) and reading paused`)
  t.ok(queuedWhileStalled <= LIMITS_SMALL.maxQueuedBytes + LIMITS.maxFrameBytes, 'and went no further than one frame over')
  t.ok(sentWhileStalled < total / 2, `the sender is blocked (${sentWhileStalled} of ${total} sent)`)
  t.ok(sender.bufferedAmount <= LIMITS_SMALL.sendHighWaterBytes + 2 * MiB, `sender buffer ${(sender.bufferedAmount / MiB).toFixed(1)} MiB`)
  let n = 0
  for await (const m of channel.messages()) if (m.t === 'data') n++
  t.equal(n, total, 'everything arrives once the consumer reads')
  t.ok(maxBuffered <= LIMITS_SMALL.sendHighWaterBytes + 2 * MiB, `sender buffer peaked at ${(maxBuffered / MiB).toFixed(1)} MiB`)
})

t.test('a read buffer sent in place goes back to the pool only once written: the peer gets what was sent', async (t) => {
  const count = 24
  let recycled = 0
  const server = await testServer(t, async (channel) => {
    // All sends at once, into a client that is not reading yet: frames wait in ws and the
    // socket, and sends wait for room. Until all are written, whatever the pool holds is taken
    // every millisecond and scribbled on, as the next file's read would do: a buffer recycled
    // before ws wrote it would reach the peer so.
    const sends: Promise<void>[] = []
    const scribble = (): void => {
      while (pooledCount() > 0) {
        allocWithHeadroom(POOLED_BYTES).fill(0xee)
        recycled++
      }
    }
    const scribbler = setInterval(scribble, 1)
    for (let i = 0; i < count; i++) sends.push(channel.send({ t: 'data', id: i, bytes: allocWithHeadroom(POOLED_BYTES).fill(i) }))
    try {
      await Promise.all(sends)
    } finally {
      clearInterval(scribbler)
    }
    scribble()
    await channel.send({ t: 'dataEnd', id: 0 })
  })
  const { channel } = await connect(server.url, { token: null, role: 'pull', options: OPTIONS })
  await sleep(200)
  let seen = 0
  for await (const m of channel.messages()) {
    if (m.t !== 'data') continue
    t.equal(m.bytes.length, POOLED_BYTES)
    t.ok(m.bytes.every((b) => b === (m.id & 0xff)), `message ${m.id} arrived as sent`)
    seen++
  }
  t.equal(seen, count)
  t.ok(recycled >= count - 8, `buffers came back to the pool once written (${recycled})`)
})
