import t from 'tap'
import { connect, parseDsyncUrl, startServer, type Message } from '../../src/net/index.js'
import { OPTIONS, testServer } from '../support/net.js'
import { tempTree } from '../support/temp.js'
import { selfSignedCert } from '../support/tls.js'

t.test('URLs: port and subdir parsed; unsafe or odd URLs refused with USAGE', async (t) => {
  t.strictSame(parseDsyncUrl('ws://host:9000/photos/2024/'), { wsUrl: 'ws://host:9000/', subdir: 'photos/2024' })
  t.strictSame(parseDsyncUrl('ws://host'), { wsUrl: 'ws://host:8730/', subdir: '' }, 'the serve default port')
  t.strictSame(parseDsyncUrl('ws://host:80/'), { wsUrl: 'ws://host:80/', subdir: '' }, 'a written default port is kept')
  t.strictSame(parseDsyncUrl('wss://[::1]:9/a%20b'), { wsUrl: 'wss://[::1]:9/', subdir: 'a b' })
  for (const bad of ['http://h:1/', 'ws://h:1/a/../../b', 'ws://h:1/%2e%2e', 'ws://u:p@h:1/', 'ws://h:1/?x=1', 'not a url', 'ws://h:1/a%5Cb', 'ws://h:1/%00']) {
    t.throws(() => parseDsyncUrl(bad), { code: 'USAGE' }, bad)
  }
})

t.test('connection refused: NETWORK naming the URL and what to check', async (t) => {
  const server = await startServer({ host: '127.0.0.1', port: 0, token: null, log: () => {}, onSession: async () => {} })
  await server.close()
  await t.rejects(connect(server.url, { token: null, role: 'push', options: OPTIONS }), {
    code: 'NETWORK',
    message: new RegExp(`cannot connect to ${server.url.replace(/[.]/g, '\\.')}: connection refused; is \`dsync serve\` running`),
  })
})

t.test('an aborted signal stops connect with ABORTED', async (t) => {
  const server = await testServer(t, async () => {})
  await t.rejects(connect(server.url, { token: null, role: 'push', options: OPTIONS, signal: AbortSignal.abort() }), { code: 'ABORTED' })
  const ac = new AbortController()
  const pending = connect(server.url, { token: null, role: 'push', options: OPTIONS, signal: ac.signal })
  ac.abort()
  await t.rejects(pending, { code: 'ABORTED' })
})

t.test('a server that never answers the handshake: NETWORK after the timeout', async (t) => {
  const { WebSocketServer } = await import('ws')
  const silent = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  t.teardown(() => new Promise<void>((resolve) => silent.close(() => resolve())))
  await new Promise<void>((resolve) => silent.once('listening', () => resolve()))
  silent.on('connection', (ws) => ws.on('error', () => {}))
  const { port } = silent.address() as { port: number }
  await t.rejects(connect(`ws://127.0.0.1:${port}`, { token: null, role: 'push', options: OPTIONS, handshakeTimeoutMs: 150 }), {
    code: 'NETWORK', message: /did not finish the handshake within 150 ms/,
  })
  for (const ws of silent.clients) ws.terminate()
})

t.test('wss: a session over TLS with a self-signed certificate given as the CA', async (t) => {
  const { cert, key } = await selfSignedCert(await tempTree(t))
  const tls = { cert, key }
  const server = await testServer(t, async (channel) => {
    for await (const m of channel.messages()) {
      if (m.t === 'data') await channel.send({ t: 'dataEnd', id: m.id })
      if (m.t === 'filesEnd') break
    }
  }, { token: 'tls-token', tls })
  t.match(server.url, /^wss:\/\/127\.0\.0\.1:\d+$/)
  const { channel } = await connect(server.url, { token: 'tls-token', role: 'push', options: OPTIONS, ca: tls.cert })
  await channel.send({ t: 'data', id: 5, bytes: new Uint8Array([1, 2, 3]) })
  await channel.send({ t: 'filesEnd' })
  const got: Message[] = []
  for await (const m of channel.messages()) got.push(m)
  t.strictSame(got, [{ t: 'dataEnd', id: 5 }])

  await t.rejects(connect(server.url, { token: 'tls-token', role: 'push', options: OPTIONS }), {
    code: 'NETWORK', message: /certificate is not trusted/,
  }, 'without the CA the certificate is refused')
  await t.rejects(connect(server.url.replace('wss:', 'ws:'), { token: 'tls-token', role: 'push', options: OPTIONS }), {
    code: 'NETWORK',
  }, 'plain ws:// to a TLS server fails as a network error')
})

t.test('an HTTP answer other than the upgrade: 503 is BUSY with the server\'s reason, others NETWORK', async (t) => {
  const { createServer } = await import('node:http')
  const http = createServer()
  http.on('upgrade', (_req, socket) => {
    const status = busy ? 503 : 404
    socket.end(`HTTP/1.1 ${status} X\r\nContent-Length: 36\r\nConnection: close\r\n\r\ndsync server: full, come back later\n`)
  })
  let busy = true
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => http.close(() => resolve())))
  const url = `ws://127.0.0.1:${(http.address() as { port: number }).port}`
  await t.rejects(connect(url, { token: null, role: 'push', options: OPTIONS }), { code: 'BUSY', message: /: full, come back later$/ })
  busy = false
  await t.rejects(connect(url, { token: null, role: 'push', options: OPTIONS }), { code: 'NETWORK', message: /answered HTTP 404/ })
})
