import t from 'tap'
import { connect, type Message } from '../../src/net/index.js'
import { OPTIONS, testServer } from '../support/net.js'

t.test('a session runs after the handshake and both sides see each message once, in order', async (t) => {
  const seen: Message[] = []
  const server = await testServer(t, async (channel, session) => {
    t.equal(session.role, 'push')
    t.equal(session.subdir, 'a/b')
    for await (const m of channel.messages()) {
      seen.push(m)
      if (m.t === 'filesEnd') break
    }
    await channel.send({ t: 'done', summary: { files: 2 } })
  }, { token: 's3cret' })
  const { channel, subdir } = await connect(`${server.url}/a/b`, { token: 's3cret', role: 'push', options: OPTIONS })
  t.equal(subdir, 'a/b')
  await channel.send({ t: 'want', id: 1, path: 'x/y.txt' })
  await channel.send({ t: 'filesEnd' })
  const got: Message[] = []
  for await (const m of channel.messages()) got.push(m)
  t.same(got, [{ t: 'done', summary: { files: 2 } }])
  t.same(seen, [{ t: 'want', id: 1, path: 'x/y.txt' }, { t: 'filesEnd' }])
  t.ok(channel.stats.bytesSent > 0 && channel.stats.bytesReceived > 0)
})
