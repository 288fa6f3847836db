import { randomBytes } from 'node:crypto'
import { createConnection, type Socket } from 'node:net'
import type { Test } from 'tap'
import { WebSocket } from 'ws'
import { clientMac, newChallenge } from '../../src/net/auth.js'
import {
  decode, encode, startServer, type Channel, type Message, type RunningServer, type ServerOptions, type Session, type SessionOptions,
} from '../../src/net/index.js'

/** Session options with every switch off. */
export const OPTIONS: SessionOptions = Object.freeze({
  dryRun: false, delete: false, checksum: false, threshold: 0.5, metric: 'dice', force: false, exclude: [],
})

/** A server on 127.0.0.1, port 0, closed when the test ends. Log lines are collected in `logs`. */
export async function testServer(
  t: Test,
  onSession: (channel: Channel, session: Session) => Promise<void>,
  opts: Partial<Omit<ServerOptions, 'onSession' | 'log'>> = {},
): Promise<RunningServer & { logs: string[] }> {
  const logs: string[] = []
  const server = await startServer({ host: '127.0.0.1', port: 0, token: null, log: (l) => logs.push(l), onSession, ...opts })
  t.teardown(() => server.close())
  return Object.assign(server, { logs })
}

/** A bare WebSocket peer that speaks frames, for sending what a real client never would. */
export interface RawPeer {
  readonly ws: WebSocket
  /** The next decoded message the server sent (rejects if the connection closes first). */
  next(): Promise<Message>
  /** Resolves with the close code once the connection is closed. */
  readonly closed: Promise<number>
}

/** Opens a raw WebSocket to `url`. */
export async function rawPeer(url: string): Promise<RawPeer> {
  const ws = new WebSocket(url, { perMessageDeflate: false })
  const inbox: Message[] = []
  const waiting: ((m: Message | null) => void)[] = []
  let ended = false
  ws.on('message', (data: Buffer) => {
    const m = decode(data)
    const w = waiting.shift()
    if (w) w(m)
    else inbox.push(m)
  })
  const closed = new Promise<number>((resolve) => ws.on('close', (code: number) => {
    ended = true
    for (const w of waiting.splice(0)) w(null)
    resolve(code)
  }))
  ws.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return {
    ws,
    closed,
    next: async () => {
      const m = inbox.shift() ?? (ended ? null : await new Promise<Message | null>((resolve) => waiting.push(resolve)))
      if (m === null) throw new Error('connection closed before the next message')
      return m
    },
  }
}

/** A raw peer that has done the handshake (as a pull client of the root) with `token`. */
export async function rawSession(url: string, token: string | null): Promise<RawPeer> {
  const peer = await rawPeer(url)
  const hello = await peer.next()
  if (hello.t !== 'hello') throw new Error(`expected hello, got ${hello.t}`)
  const transcript = { version: 1, serverChallenge: hello.challenge, clientChallenge: newChallenge(), role: 'pull' as const, subdir: '' }
  peer.ws.send(encode({
    t: 'auth', version: 1, mac: token === null ? new Uint8Array(0) : clientMac(token, transcript),
    challenge: transcript.clientChallenge, role: 'pull', subdir: '', options: OPTIONS,
  }))
  const welcome = await peer.next()
  if (welcome.t !== 'welcome') throw new Error(`expected welcome, got ${welcome.t}`)
  return peer
}

/** A TCP peer that may speak just enough WebSocket to get in, then never reads or answers. */
export interface SilentPeer {
  readonly socket: Socket
  /** Resolves with the time (ms since the peer connected) when the server has closed the socket. */
  readonly closed: Promise<number>
}

/**
 * Opens a raw TCP connection to `url` and goes silent after `upTo`: 'connect' sends nothing,
 * 'upgrade' completes the WebSocket upgrade, 'auth' also sends `auth` (tokenless server) as a
 * masked client frame. It never answers a ping or a close frame: the socket ends only when the
 * server cuts it (destroyed by the test's teardown otherwise).
 */
export async function silentPeer(t: Test, url: string, upTo: 'connect' | 'upgrade' | 'auth', localAddress?: string): Promise<SilentPeer> {
  const { hostname, port } = new URL(url)
  const started = performance.now()
  const socket = createConnection({ host: hostname, port: Number(port), ...(localAddress === undefined ? {} : { localAddress }) })
  socket.on('error', () => {})
  t.teardown(() => void socket.destroy())
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - started)))
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  if (upTo === 'connect') {
    socket.resume()
    return { socket, closed }
  }
  socket.write(
    `GET / HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  )
  await new Promise<void>((resolve, reject) => {
    let head = ''
    const onData = (d: Buffer): void => {
      head += d.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      socket.off('data', onData)
      // Read and drop whatever comes (so the server's FIN is seen), answer nothing: no pong, no close.
      socket.on('data', () => {})
      if (head.startsWith('HTTP/1.1 101')) resolve()
      else reject(new Error(`upgrade refused: ${head.split('\r\n')[0]}`))
    }
    socket.on('data', onData)
  })
  if (upTo === 'auth') {
    const payload = encode({ t: 'auth', version: 1, mac: new Uint8Array(0), challenge: new Uint8Array(32), role: 'pull', subdir: '', options: OPTIONS })
    // A client frame must be masked; an all-zero mask leaves the payload as it is.
    const len = payload.length < 126 ? [0x80 | payload.length] : [0x80 | 126, payload.length >> 8, payload.length & 0xff]
    socket.write(Buffer.concat([Buffer.from([0x82, ...len, 0, 0, 0, 0]), payload]))
  }
  return { socket, closed }
}

/** Polls `cond` every 10 ms until it holds; throws after `ms`. */
export async function until(cond: () => boolean, ms = 3000, what = 'condition'): Promise<void> {
  const end = performance.now() + ms
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Resolves with the value, or with 'timeout' after `ms`: a test asserts on it instead of hanging. */
export function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref())])
}
