import t from 'tap'
import { DsyncError } from '../../src/errors.js'
import { clientMac, newChallenge } from '../../src/net/auth.js'
import { connect, encode, startServer, LIMITS, type Channel, type Message } from '../../src/net/index.js'
import { OPTIONS, rawPeer, rawSession, silentPeer, testServer, until, within } from '../support/net.js'

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

t.test('handshake deadline: a silent peer\'s socket is gone within a second of it, at every stage', async (t) => {
  // Found on main: the deadline was logged, but the socket stayed until ws's 30 s close timeout,
  // since a silent peer never answers the close frame.
  const deadline = 300
  // A close timeout well under the second the assertion allows, so timer jitter on a busy machine
  // does not decide the outcome; without the cut the socket would stay for ws's 30 s.
  const server = await testServer(t, echoDone([]), { handshakeTimeoutMs: deadline, closeTimeoutMs: 200 })
  const upgraded = await silentPeer(t, server.url, 'upgrade')
  const bare = await silentPeer(t, server.url, 'connect')
  const [a, b] = await Promise.all([within(upgraded.closed, deadline + 3000), within(bare.closed, deadline + 3000)])
  t.ok(a !== 'timeout' && a >= deadline - 50 && a <= deadline + 1000, `after the upgrade: closed at ${a} ms`)
  t.ok(b !== 'timeout' && b >= deadline - 50 && b <= deadline + 1000, `before any HTTP request: closed at ${b} ms`)
  t.match(server.logs.join('\n'), /refused: NETWORK: handshake not finished within 300 ms/)
  await until(() => server.pendingHandshakes === 0, 1000, 'the slots to be released')
})

t.test('a session the server ends is cut when the peer never answers the close frame', async (t) => {
  const server = await testServer(t, async () => {}, { closeTimeoutMs: 300 })
  const peer = await silentPeer(t, server.url, 'auth')
  const at = await within(peer.closed, 3000)
  t.ok(at !== 'timeout' && at < 1300, `closed at ${at} ms`)
  t.match(server.logs.join('\n'), /pull \/: session done/)
  t.equal(server.activeSessions, 0)
})

t.test('cap on unauthenticated connections: the one over it gets BUSY (HTTP 503), logged once; then a client is served', async (t) => {
  const server = await testServer(t, echoDone([]), { maxPendingHandshakes: 3, maxPendingPerAddress: 100, handshakeTimeoutMs: 5000 })
  const silent = [
    await silentPeer(t, server.url, 'connect'),
    await silentPeer(t, server.url, 'upgrade'),
    await silentPeer(t, server.url, 'upgrade'),
  ]
  await until(() => server.pendingHandshakes === 3, 2000, '3 pending connections')
  const started = performance.now()
  for (let i = 0; i < 5; i++) {
    await t.rejects(connect(server.url, { token: null, role: 'push', options: OPTIONS }), {
      code: 'BUSY', message: /3 connections are waiting to authenticate, the most this server allows/,
    })
  }
  t.ok(performance.now() - started < 1000, 'refused at once, not at a deadline')
  t.equal(server.logs.filter((l) => /^refusing connections/.test(l)).length, 1, 'one log line for the burst')
  t.equal(server.pendingHandshakes, 3, 'refused connections hold no slot')
  for (const p of silent) p.socket.destroy()
  await until(() => server.pendingHandshakes === 0, 2000, 'the slots to be released')
  t.strictSame(await runClient(server.url, null), [{ t: 'done', summary: { files: 0 } }])
})

t.test('cap per address: one address cannot take every slot', async (t) => {
  const server = await testServer(t, echoDone([]), { maxPendingHandshakes: 10, maxPendingPerAddress: 2, handshakeTimeoutMs: 5000 })
  await silentPeer(t, server.url, 'upgrade')
  await silentPeer(t, server.url, 'upgrade')
  await t.rejects(silentPeer(t, server.url, 'upgrade'), /upgrade refused: HTTP\/1.1 503/, 'a third from 127.0.0.1')
  await t.rejects(connect(server.url, { token: null, role: 'push', options: OPTIONS }), {
    code: 'BUSY', message: /from 127\.0\.0\.1 are waiting to authenticate/,
  })
  // Linux routes all of 127/8 to loopback: another address on the same machine.
  const other = await silentPeer(t, server.url, 'upgrade', '127.0.0.2')
  t.ok(other, 'another address still gets in')
  t.equal(server.pendingHandshakes, 3)
})

t.test('cap on sessions: the session over it gets BUSY, the rest are unharmed, and the slot comes back', async (t) => {
  let finish!: () => void
  const held = new Promise<void>((resolve) => (finish = resolve))
  let first = true
  const server = await testServer(t, async (channel) => {
    if (first) {
      first = false
      await held
    }
    for await (const m of channel.messages()) if (m.t === 'filesEnd') break
    await channel.send({ t: 'done', summary: { files: 0 } })
  }, { maxSessions: 1 })
  const { channel } = await connect(server.url, { token: null, role: 'push', options: OPTIONS })
  await until(() => server.activeSessions === 1, 2000, 'the first session')
  await t.rejects(connect(server.url, { token: null, role: 'push', options: OPTIONS }), {
    code: 'BUSY', message: /the server is busy: 1 sessions are open, the most it allows/,
  })
  t.match(server.logs.join('\n'), /refusing sessions: the server is busy/)
  finish()
  await channel.send({ t: 'filesEnd' })
  const got: Message[] = []
  for await (const m of channel.messages()) got.push(m)
  t.strictSame(got, [{ t: 'done', summary: { files: 0 } }], 'the running session finished normally')
  await until(() => server.activeSessions === 0, 2000, 'the slot to be released')
  t.strictSame(await runClient(server.url, null), [{ t: 'done', summary: { files: 0 } }])
})
