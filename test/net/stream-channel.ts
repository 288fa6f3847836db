import t from 'tap'
import { PassThrough } from 'node:stream'
import { StreamChannel } from '../../src/net/stream-channel.js'
import { allocWithHeadroom, POOLED_BYTES, pooledCount } from '../../src/headroom.js'
import { decode, encode, LIMITS, type ChannelLimits, type Message } from '../../src/net/index.js'
import { randomBytes } from '../support/random.js'
import { DsyncError } from '../../src/errors.js'

const MiB = 1024 * 1024
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Two StreamChannels joined by two pipes, as a client and `serve --stdio` are through ssh. */
function streamPair(limits?: ChannelLimits) {
  const aToB = new PassThrough()
  const bToA = new PassThrough()
  const a = new StreamChannel(bToA, aToB, limits && { limits })
  const b = new StreamChannel(aToB, bToA, limits && { limits })
  return { a, b, aToB, bToA }
}

/** A channel whose peer is the test, writing raw bytes and reading what comes back. */
function rawPeer() {
  const toChannel = new PassThrough()
  const fromChannel = new PassThrough()
  const channel = new StreamChannel(toChannel, fromChannel)
  const chunks: Buffer[] = []
  fromChannel.on('data', (b: Buffer) => chunks.push(b))
  const ended = new Promise<void>((resolve) => fromChannel.on('end', () => resolve()))
  return { channel, toChannel, ended, received: () => Buffer.concat(chunks) }
}

function framed(payload: Uint8Array): Buffer {
  const head = Buffer.alloc(4)
  head.writeUInt32BE(payload.length)
  return Buffer.concat([head, payload])
}

/** Splits what a channel wrote into its messages and its close record. */
function parseOutput(bytes: Buffer): { messages: Message[]; close?: { code: number; reason: string } } {
  const messages: Message[] = []
  let at = 0
  while (at < bytes.length) {
    const n = bytes.readUInt32BE(at)
    if (n === 0) {
      const code = bytes.readUInt16BE(at + 4)
      const len = bytes.readUInt8(at + 6)
      return { messages, close: { code, reason: bytes.subarray(at + 7, at + 7 + len).toString() } }
    }
    messages.push(decode(bytes.subarray(at + 4, at + 4 + n)))
    at += 4 + n
  }
  return { messages }
}

t.test('messages cross both ways in order, a close record ends the peer normally, stats count frames', async (t) => {
  const { a, b } = streamPair()
  const sent: Message[] = [
    { t: 'want', id: 1, path: 'a.txt' },
    { t: 'data', id: 1, bytes: randomBytes(1, 300_000) },
    { t: 'dataEnd', id: 1 },
  ]
  for (const m of sent) await a.send(m)
  await b.send({ t: 'filesEnd' })
  a.close()
  const got: Message[] = []
  for await (const m of b.messages()) got.push(m)
  t.strictSame(got, sent)
  const back: Message[] = []
  for await (const m of a.messages()) back.push(m)
  t.strictSame(back, [{ t: 'filesEnd' }], 'what arrived before its own close is still read, then the end')
  t.equal(a.stats.bytesSent, b.stats.bytesReceived, 'payload bytes, both sides agree')
})

t.test('frames split at every byte boundary still decode (the parser keeps partial prefixes and payloads)', async (t) => {
  const { channel, toChannel } = rawPeer()
  const msgs: Message[] = [{ t: 'filesEnd' }, { t: 'want', id: 7, path: 'x/y.txt' }, { t: 'data', id: 7, bytes: randomBytes(2, 5000) }]
  const bytes = Buffer.concat(msgs.map((m) => framed(encode(m))))
  for (let i = 0; i < bytes.length; i += 3) toChannel.write(bytes.subarray(i, i + 3))
  toChannel.write(Buffer.from([0, 0, 0, 0, 0x03, 0xe8, 0]))
  const got: Message[] = []
  for await (const m of channel.messages()) got.push(m)
  t.strictSame(got, msgs)
})

t.test('a close record carries its code and reason: 1001 is NETWORK "went away (interrupted)"', async (t) => {
  const { a, b } = streamPair()
  a.close(1001, 'interrupted')
  await t.rejects(b.receive(), { code: 'NETWORK', message: /went away mid-session \(interrupted\)/ })
})

t.test('input that ends without a close record is a dropped connection (NETWORK)', async (t) => {
  const { channel, toChannel } = rawPeer()
  toChannel.write(framed(encode({ t: 'filesEnd' })))
  toChannel.end()
  t.strictSame(await channel.receive(), { t: 'filesEnd' }, 'what came before the drop is delivered')
  await t.rejects(channel.receive(), { code: 'NETWORK' })
})

t.test('an oversized length prefix is refused before a byte of it is buffered: BAD_MESSAGE, error + close 1009', async (t) => {
  const { channel, toChannel, ended, received } = rawPeer()
  const rssBefore = process.memoryUsage().arrayBuffers
  toChannel.write(Buffer.from([0xff, 0xff, 0xff, 0xf0]))
  // The "frame" that follows never arrives whole; the channel must not wait for or hold it.
  toChannel.write(randomBytes(3, 64 * 1024))
  await t.rejects(channel.receive(), { code: 'BAD_MESSAGE', message: /4294967280-byte frame; the limit is 4194304/ })
  await ended
  const out = parseOutput(received())
  t.match(out.messages, [{ t: 'error', code: 'BAD_MESSAGE' }], 'the peer is told why')
  t.match(out.close, { code: 1009 }, 'then a close record: message too big')
  t.ok(process.memoryUsage().arrayBuffers - rssBefore < 16 * MiB, 'nothing near 4 GiB was allocated')
})

t.test('before the handshake the frame limit is the pre-auth one (16 KiB)', async (t) => {
  const { channel, toChannel } = rawPeer()
  channel.setFrameLimit(LIMITS.maxHandshakeFrameBytes)
  toChannel.write(framed(randomBytes(4, 20_000)))
  await t.rejects(channel.receive(), { code: 'BAD_MESSAGE', message: /before the handshake finished; the limit is 16384/ })
})

t.test('garbage frames: BAD_MESSAGE, not a crash', async (t) => {
  for (const junk of [randomBytes(5, 100), Buffer.from([0xc1]), Buffer.from('GET / HTTP/1.1\r\n')]) {
    const { channel, toChannel } = rawPeer()
    toChannel.write(framed(junk))
    await t.rejects(channel.receive(), { code: 'BAD_MESSAGE' })
  }
  // Not even framed: ASCII read as a length prefix is some 1.2 GB, over the limit.
  const { channel, toChannel } = rawPeer()
  toChannel.write('hello there, I am not dsync\n')
  await t.rejects(channel.receive(), { code: 'BAD_MESSAGE' })
})

t.test('backpressure: a slow consumer of 40 MiB keeps the inbound queue and the output buffer bounded', async (t) => {
  const limits: ChannelLimits = { maxQueuedBytes: 2 * MiB, maxQueuedMessages: 64, sendHighWaterBytes: 1 * MiB }
  const { a, b, aToB } = streamPair(limits)
  const payload = randomBytes(6, MiB)
  const total = 40
  let maxBuffered = 0
  const sending = (async () => {
    for (let i = 0; i < total; i++) {
      await a.send({ t: 'data', id: 1, bytes: payload })
      maxBuffered = Math.max(maxBuffered, aToB.writableLength)
    }
    await a.send({ t: 'dataEnd', id: 1 })
    a.close()
  })()
  let maxQueued = 0
  let received = 0
  for await (const m of b.messages()) {
    maxQueued = Math.max(maxQueued, b.queuedBytes)
    if (m.t === 'data') {
      received++
      await sleep(2)
    }
  }
  await sending
  t.equal(received, total)
  // One frame of slack each: the queue pauses after the frame that crossed the limit.
  t.ok(maxQueued <= limits.maxQueuedBytes + 2 * MiB, `inbound queue peaked at ${(maxQueued / MiB).toFixed(1)} MiB`)
  t.ok(maxBuffered <= limits.sendHighWaterBytes + 2 * MiB, `output buffer peaked at ${(maxBuffered / MiB).toFixed(1)} MiB`)
})

t.test('sending after the peer is gone rejects with NETWORK instead of hanging', async (t) => {
  const { channel, toChannel } = rawPeer()
  toChannel.end()
  await t.rejects(channel.receive(), { code: 'NETWORK' })
  await t.rejects(channel.send({ t: 'filesEnd' }), { code: 'NETWORK' })
})

t.test('a send after the peer went says why it went, as receiving does (the explained end), even before receiving', async (t) => {
  const toChannel = new PassThrough()
  const fromChannel = new PassThrough()
  fromChannel.resume()
  let release!: () => void
  const exited = new Promise<void>((resolve) => (release = resolve))
  // As connectSsh's: the remote shell's exit status comes a little after its stdout ends.
  const channel = new StreamChannel(toChannel, fromChannel, {
    explainEnd: async () => {
      await exited
      return new DsyncError('NETWORK', 'the remote side was killed by SIGKILL before the session finished')
    },
  })
  toChannel.end()
  await sleep(10)
  const sending = channel.send({ t: 'filesEnd' })
  release()
  await t.rejects(sending, { code: 'NETWORK', message: /killed by SIGKILL/ }, 'the send, made before the exit was known')
  await t.rejects(channel.receive(), { code: 'NETWORK', message: /killed by SIGKILL/ }, 'and receiving')
  await t.rejects(channel.send({ t: 'filesEnd' }), { message: /killed by SIGKILL/ }, 'and a send after')
  // A session this side closed is no peer gone: the plain reason.
  const { channel: closedHere } = rawPeer()
  closedHere.close()
  await t.rejects(closedHere.send({ t: 'filesEnd' }), { code: 'NETWORK', message: /connection closed; cannot send 'filesEnd'/ })
})

t.test('a read buffer sent in place goes back to the pool once copied into the stream: the peer gets what was sent', async (t) => {
  const { a, b } = streamPair()
  const count = 12
  // Sent one after another while the peer reads (the pipe holds what was written until then).
  const sending = (async () => {
    for (let i = 0; i < count; i++) {
      await a.send({ t: 'data', id: i, bytes: allocWithHeadroom(POOLED_BYTES).fill(i) })
      t.ok(pooledCount() > 0, 'copied into the stream: its buffer is free')
      // Taken and scribbled on, as the next read would: the frame in the pipe is a copy.
      while (pooledCount() > 0) allocWithHeadroom(POOLED_BYTES).fill(0xee)
    }
    a.close()
  })()
  let seen = 0
  for await (const m of b.messages()) {
    if (m.t !== 'data') continue
    t.ok(m.bytes.length === POOLED_BYTES && m.bytes.every((x) => x === m.id), `message ${m.id} arrived as sent`)
    seen++
  }
  await sending
  t.equal(seen, count)
})
