import t from 'tap'
import { DsyncError } from '../../src/errors.js'
import { clientMac, newChallenge } from '../../src/net/auth.js'
import { connect, encode, startServer, LIMITS, type Channel, type Message } from '../../src/net/index.js'
import { OPTIONS, rawPeer, rawSession, testServer } from '../support/net.js'

const TOKEN = 'correct horse battery staple'

/** An onSession that answers 'done' to whatever comes, recording the sessions it ran. */
function echoDone(ran: string[]) {
  return async (channel: Channel, session: { role: string; subdir: string }) => {
    ran.push(`${session.role}:${session.subdir}`)
    for await (const m of channel.messages()) {
      if (m.t === 'filesEnd') break
    }
    await channel.send({ t: 'done', summary: { files: 0 } })
  }
}

async function runClient(url: string, token: string | null): Promise<Message[]> {
  const { channel } = await connect(url, { token, role: 'push', options: OPTIONS })
  await channel.send({ t: 'filesEnd' })
  const got: Message[] = []
  for await (const m of channel.messages()) got.push(m)
  return got
}

t.test('a session runs after the handshake and both sides see each message once, in order', async (t) => {
  const seen: Message[] = []
  const server = await testServer(t, async (channel, session) => {
    t.equal(session.role, 'push')
    t.equal(session.subdir, 'a/b')
    t.strictSame(session.options, { ...OPTIONS, exclude: ['*.tmp'] })
    t.match(session.peer, /^127\.0\.0\.1:\d+$/)
    for await (const m of channel.messages()) {
      seen.push(m)
      if (m.t === 'filesEnd') break
    }
    await channel.send({ t: 'done', summary: { files: 2 } })
  }, { token: TOKEN })
  const { channel, subdir } = await connect(`${server.url}/a/b`, { token: TOKEN, role: 'push', options: { ...OPTIONS, exclude: ['*.tmp'] } })
  t.equal(subdir, 'a/b')
  await channel.send({ t: 'want', id: 1, path: 'x/y.txt' })
  await channel.send({ t: 'filesEnd' })
  const got: Message[] = []
  for await (const m of channel.messages()) got.push(m)
  t.strictSame(got, [{ t: 'done', summary: { files: 2 } }])
  t.strictSame(seen, [{ t: 'want', id: 1, path: 'x/y.txt' }, { t: 'filesEnd' }])
  t.ok(channel.stats.bytesSent > 0 && channel.stats.bytesReceived > 0)
  t.match(server.logs.join('\n'), /push a\/b: session started[\s\S]*session done/)
})

t.test('auth: a wrong or missing token gets AUTH_FAILED, no session, and the server serves the next client', async (t) => {
  const ran: string[] = []
  const server = await testServer(t, echoDone(ran), { token: TOKEN })
  await t.rejects(connect(server.url, { token: 'wrong', role: 'push', options: OPTIONS }), { code: 'AUTH_FAILED', message: /wrong token/ })
  await t.rejects(connect(server.url, { token: null, role: 'push', options: OPTIONS }), { code: 'AUTH_FAILED', message: /requires a token/ })
  t.strictSame(ran, [], 'onSession never ran')
  t.match(server.logs.join('\n'), /refused: AUTH_FAILED: wrong token[\s\S]*refused: AUTH_FAILED: this server requires a token/)
  t.strictSame(await runClient(server.url, TOKEN), [{ t: 'done', summary: { files: 0 } }])
  t.strictSame(ran, ['push:'])
})

t.test('auth is mutual: a client with a token refuses a server that cannot prove it', async (t) => {
  const ran: string[] = []
  const server = await testServer(t, echoDone(ran), { token: null })
  await t.rejects(connect(server.url, { token: TOKEN, role: 'push', options: OPTIONS }), { code: 'AUTH_FAILED', message: /did not prove/ })
  t.strictSame(await runClient(server.url, null), [{ t: 'done', summary: { files: 0 } }], 'a tokenless client is fine on loopback')
})

t.test('a MAC made for one subdir does not open another', async (t) => {
  const ran: string[] = []
  const server = await testServer(t, echoDone(ran), { token: TOKEN })
  const peer = await rawPeer(server.url)
  const hello = await peer.next()
  if (hello.t !== 'hello') throw new Error('expected hello')
  const clientChallenge = newChallenge()
  const mac = clientMac(TOKEN, { version: 1, serverChallenge: hello.challenge, clientChallenge, role: 'pull', subdir: 'public' })
  peer.ws.send(encode({ t: 'auth', version: 1, mac, challenge: clientChallenge, role: 'pull', subdir: 'private', options: OPTIONS }))
  t.match(await peer.next(), { t: 'error', code: 'AUTH_FAILED' })
  await peer.closed
  t.strictSame(ran, [])
})

t.test('no token on a non-loopback host: the server refuses to start', async (t) => {
  await t.rejects(
    startServer({ host: '0.0.0.0', port: 0, token: null, log: () => {}, onSession: async () => {} }),
    { code: 'USAGE', message: /without a token/ },
  )
  await t.rejects(
    startServer({ host: '127.0.0.1', port: 0, token: '', log: () => {}, onSession: async () => {} }),
    { code: 'USAGE', message: /token is empty/ },
  )
})

t.test('no common protocol version: PROTOCOL_VERSION on the client, logged on the server', async (t) => {
  const ran: string[] = []
  const server = await testServer(t, echoDone(ran), { versions: [99] })
  await t.rejects(connect(server.url, { token: null, role: 'push', options: OPTIONS }), { code: 'PROTOCOL_VERSION', message: /speaks protocol version 99/ })
  const server2 = await testServer(t, echoDone(ran), { versions: [1, 2] })
  await t.rejects(connect(server2.url, { token: null, role: 'push', options: OPTIONS, versions: [3] }), { code: 'PROTOCOL_VERSION' })
  t.strictSame(ran, [])
  // A client that claims a version the server never offered.
  const peer = await rawPeer(server2.url)
  await peer.next()
  peer.ws.send(encode({ t: 'auth', version: 7, mac: new Uint8Array(0), challenge: new Uint8Array(32), role: 'pull', subdir: '', options: OPTIONS }))
  t.match(await peer.next(), { t: 'error', code: 'PROTOCOL_VERSION', message: /version 7/ })
  // A newer client picks the highest version both speak.
  t.strictSame(await runClient(server2.url, null), [{ t: 'done', summary: { files: 0 } }])
})

t.test('an oversized frame closes that session (1009) and the server serves others', async (t) => {
  const errors: DsyncError[] = []
  const server = await testServer(t, async (channel) => {
    try {
      for await (const m of channel.messages()) void m
    } catch (err) {
      errors.push(err as DsyncError)
      throw err
    }
  })
  const peer = await rawSession(server.url, null)
  peer.ws.send(new Uint8Array(LIMITS.maxFrameBytes + 1))
  t.equal(await peer.closed, 1009)
  t.equal(errors[0]?.code, 'BAD_MESSAGE')
  const ok = await testServer(t, echoDone([]))
  t.strictSame(await runClient(ok.url, null), [{ t: 'done', summary: { files: 0 } }])
  const again = await rawSession(server.url, null)
  again.ws.close()
  await again.closed
})

t.test('before auth even a small frame over the handshake limit is refused', async (t) => {
  const ran: string[] = []
  const server = await testServer(t, echoDone(ran))
  const peer = await rawPeer(server.url)
  await peer.next()
  peer.ws.send(new Uint8Array(LIMITS.maxHandshakeFrameBytes + 1))
  t.match(await peer.next(), { t: 'error', code: 'BAD_MESSAGE', message: /before the handshake/ })
  t.equal(await peer.closed, 1009)
  t.strictSame(ran, [])
})

t.test('a text frame gets BAD_MESSAGE and a 1003 close', async (t) => {
  const server = await testServer(t, async (channel) => {
    for await (const m of channel.messages()) void m
  })
  const peer = await rawSession(server.url, null)
  peer.ws.send('{"t":"filesEnd"}')
  t.match(await peer.next(), { t: 'error', code: 'BAD_MESSAGE', message: /text frame/ })
  t.equal(await peer.closed, 1003)
  t.match(server.logs.join('\n'), /BAD_MESSAGE: text frame/)
})

t.test('garbage after the handshake: BAD_MESSAGE to the peer, the session fails, the log says why', async (t) => {
  const failures: string[] = []
  const server = await testServer(t, async (channel) => {
    try {
      for await (const m of channel.messages()) void m
    } catch (err) {
      failures.push((err as DsyncError).code)
      throw err
    }
  })
  const peer = await rawSession(server.url, null)
  peer.ws.send(Buffer.from('c1c1c1c1', 'hex'))
  t.match(await peer.next(), { t: 'error', code: 'BAD_MESSAGE' })
  t.equal(await peer.closed, 1008)
  t.strictSame(failures, ['BAD_MESSAGE'])
  const peer2 = await rawSession(server.url, null)
  peer2.ws.send(encode({ t: 'want', id: 1, path: '../../etc/passwd' }))
  t.match(await peer2.next(), { t: 'error', code: 'BAD_MESSAGE', message: /unsafe path/ })
  t.match(server.logs.join('\n'), /BAD_MESSAGE: malformed 'want' message: path is refused/)
})

t.test("a DsyncError from onSession reaches the client with its code; other errors become INTERNAL", async (t) => {
  const server = await testServer(t, async (_channel, session) => {
    if (session.subdir === 'boom') throw new Error('kaboom')
    throw new DsyncError('CHANGED_ON_RECEIVER', 'notes.txt: changed on the receiver; pull first or use --force')
  })
  const { channel } = await connect(server.url, { token: null, role: 'push', options: OPTIONS })
  await t.rejects(async () => {
    for await (const m of channel.messages()) void m
  }, { code: 'CHANGED_ON_RECEIVER', message: 'notes.txt: changed on the receiver; pull first or use --force' })
  const c2 = await connect(`${server.url}/boom`, { token: null, role: 'push', options: OPTIONS })
  await t.rejects(async () => {
    for await (const m of c2.channel.messages()) void m
  }, { code: 'INTERNAL', message: /kaboom/ })
  t.match(server.logs.join('\n'), /CHANGED_ON_RECEIVER: notes.txt[\s\S]*INTERNAL: internal server error: kaboom/)
})

t.test('a client that says nothing is cut off after the handshake timeout', async (t) => {
  const server = await testServer(t, echoDone([]), { handshakeTimeoutMs: 150 })
  const peer = await rawPeer(server.url)
  t.match(await peer.next(), { t: 'hello' })
  t.match(await peer.next(), { t: 'error', code: 'NETWORK', message: /handshake not finished within 150 ms/ })
  t.equal(await peer.closed, 1008)
})

t.test('close() ends live sessions with 1001 and stops listening', async (t) => {
  let started!: () => void
  const running = new Promise<void>((resolve) => (started = resolve))
  const server = await startServer({
    host: '127.0.0.1', port: 0, token: null, log: () => {},
    onSession: async (channel) => {
      started()
      for await (const m of channel.messages()) void m
    },
  })
  const { channel } = await connect(server.url, { token: null, role: 'pull', options: OPTIONS })
  await running
  await server.close()
  await t.rejects(async () => {
    for await (const m of channel.messages()) void m
  }, { code: 'NETWORK', message: /went away/ })
  await t.rejects(connect(server.url, { token: null, role: 'pull', options: OPTIONS }), { code: 'NETWORK', message: /connection refused/ })
})
