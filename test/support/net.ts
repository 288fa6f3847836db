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
