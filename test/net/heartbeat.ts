import t from 'tap'
import { WebSocketServer } from 'ws'
import { connect, encode, type Channel } from '../../src/net/index.js'
import { OPTIONS, rawSession, silentPeer, testServer, until, within } from '../support/net.js'

/** An onSession that reads until the channel ends and records how it ended. */
function recordEnd(ends: (Error | null)[]) {
  return async (channel: Channel) => {
    try {
      for await (const m of channel.messages()) void m
      ends.push(null)
    } catch (err) {
      ends.push(err as Error)
      throw err
    }
  }
}

t.test('server: a peer that stops answering pings is cut within two intervals; a quiet live one stays', async (t) => {
  // Wide enough that a loaded machine still gets each pong back within one interval.
  const interval = 500
  const ends: (Error | null)[] = []
  const server = await testServer(t, recordEnd(ends), { heartbeatMs: interval })
  const quiet = await rawSession(server.url, null)
  const gone = await silentPeer(t, server.url, 'auth')
  await until(() => server.activeSessions === 2, 2000, 'both sessions')
  const at = await within(gone.closed, 5000)
  t.ok(at !== 'timeout' && at < 3 * interval + 1000, `the silent peer's socket was closed at ${at} ms`)
  t.equal(ends.length, 1)
  t.match(ends[0], { code: 'NETWORK', message: /stopped answering: no pong and no data for over 0.5 s/ })
  await new Promise((r) => setTimeout(r, 3 * interval))
  t.equal(quiet.ws.readyState, quiet.ws.OPEN, 'a peer that answers pings but sends nothing stays connected')
  t.equal(server.activeSessions, 1)
  quiet.ws.close()
  await quiet.closed
})

t.test('client: a server that stops answering pings fails the session with NETWORK', async (t) => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false })
  t.teardown(() => new Promise<void>((resolve) => {
    for (const ws of wss.clients) ws.terminate()
    wss.close(() => resolve())
  }))
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()))
  wss.on('connection', (ws) => {
    ws.on('error', () => {})
    ws.send(encode({ t: 'hello', versions: [1], server: 'mute', challenge: new Uint8Array(32) }))
    ws.once('message', () => ws.send(encode({ t: 'welcome', version: 1, mac: new Uint8Array(0) })))
  })
  const { port } = wss.address() as { port: number }
  const { channel } = await connect(`ws://127.0.0.1:${port}`, { token: null, role: 'pull', options: OPTIONS, heartbeatMs: 300 })
  const started = performance.now()
  const drained = (async () => {
    for await (const m of channel.messages()) void m
  })()
  t.equal(await within(drained.catch((err: unknown) => err), 5000) !== 'timeout', true, 'the session ended')
  await t.rejects(drained, { code: 'NETWORK', message: /stopped answering/ })
  t.ok(performance.now() - started < 2000, 'within two intervals and a bit')
})
