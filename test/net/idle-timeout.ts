import t from 'tap'
import { memoryChannelPair, withIdleTimeout } from '../../src/net/index.js'

t.test('a session where nothing moves for the timeout is closed with NETWORK', async (t) => {
  const [a, b] = memoryChannelPair()
  const watched = withIdleTimeout(a, 100)
  const started = Date.now()
  await t.rejects(
    (async () => {
      for await (const _ of watched.messages()) void _
    })(),
    { code: 'NETWORK', message: /no data moved/ },
  )
  t.ok(Date.now() - started >= 90, 'not before the timeout')
  b.close()
})

t.test('traffic either way keeps a session alive, and a normal end is not an error', async (t) => {
  const [a, b] = memoryChannelPair()
  const watched = withIdleTimeout(a, 120)
  // The watched side only SENDS for a while (a sender streaming a big file hears nothing back).
  const sending = (async () => {
    for (let i = 0; i < 8; i++) {
      await watched.send({ t: 'data', id: 1, bytes: new Uint8Array(10) })
      await new Promise((r) => setTimeout(r, 50))
    }
    b.close()
  })()
  const drain = (async () => {
    for await (const _ of b.messages()) void _
  })()
  const got: string[] = []
  for await (const m of watched.messages()) got.push(m.t)
  await sending
  await drain
  t.same(got, [], '400 ms of one-way traffic with a 120 ms timeout, then a normal close')
})
