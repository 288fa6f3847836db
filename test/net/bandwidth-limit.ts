import t from 'tap'
import { memoryChannelPair, TokenBucket, withBandwidthLimit, type BucketClock } from '../../src/net/index.js'

/** A clock that moves only when someone sleeps on it: the waits it was asked for add up. */
function fakeClock(): BucketClock & { slept: number[] } {
  let now = 0
  const slept: number[] = []
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms)
      now += ms
    },
  }
}

t.test('a token bucket lets one second through at once, then holds the average to the rate', async (t) => {
  const clock = fakeClock()
  const bucket = new TokenBucket(1000, clock)
  await bucket.take(1000)
  t.same(clock.slept, [], 'the first second of tokens is there from the start')
  await bucket.take(500)
  t.same(clock.slept, [500], '500 more bytes at 1000 B/s: half a second')
  await bucket.take(4000)
  t.same(clock.slept, [500, 4000], 'a piece larger than the bucket waits for its whole size')
  for (let i = 0; i < 10; i++) await bucket.take(100)
  t.equal(clock.slept.reduce((a, b) => a + b, 0), 5500, '6500 bytes at 1000 B/s, 1000 of them free: 5.5 s in all')
})

t.test('withBandwidthLimit throttles data messages both ways, and nothing else', async (t) => {
  const clock = fakeClock()
  const [a, b] = memoryChannelPair()
  const limited = withBandwidthLimit(a, 1024, { clock })
  await limited.send({ t: 'filesEnd' })
  await limited.send({ t: 'data', id: 1, bytes: new Uint8Array(1024) })
  t.same(clock.slept, [], 'within the first second')
  await limited.send({ t: 'data', id: 1, bytes: new Uint8Array(2048) })
  t.same(clock.slept, [2000], 'sending waits')
  await b.send({ t: 'data', id: 1, bytes: new Uint8Array(1024) })
  b.close()
  const got: string[] = []
  for await (const m of limited.messages()) got.push(m.t)
  t.same(got, ['data'])
  t.same(clock.slept, [2000, 1000], 'receiving waits too')
})

t.test('withBandwidthLimit meters a bundle by its packed bytes, both ways', async (t) => {
  const clock = fakeClock()
  const [a, b] = memoryChannelPair()
  const limited = withBandwidthLimit(a, 1000, { clock })
  const bundle = { t: 'bundle' as const, streams: [{ id: 1, size: 3000 }, { id: 2, size: 1000 }], codec: 0, raw: 4000, z: new Uint8Array(4000), dict: 0 }
  await limited.send(bundle)
  t.same(clock.slept, [3000], '4000 packed bytes at 1000 B/s, 1000 of them free')
  await b.send({ ...bundle, raw: 4000, codec: 1, z: new Uint8Array(2000) })
  b.close()
  for await (const m of limited.messages()) t.equal(m.t, 'bundle')
  t.same(clock.slept, [3000, 2000], 'received: its 2000 packed bytes')
})
