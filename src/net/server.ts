import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { isIP } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import { DsyncError, isDsyncError } from '../errors.js'
import { LIMITS } from '../../protocol/messages.js'
import { CLOSE, DEFAULT_CHANNEL_LIMITS, type Channel, type ChannelLimits } from './channel.js'
import { WsChannel } from './connection.js'
import { serverHandshake, type Session } from './handshake.js'

export { type Session, SERVER_NAME } from './handshake.js'

/** How to run a server. */
export interface ServerOptions {
  /** Interface to listen on; anything but loopback requires a token. */
  host: string
  /** TCP port; 0 picks a free one. */
  port: number
  /** The shared secret clients must prove; null only on loopback. */
  token: string | null
  /** PEM certificate and key: the server speaks wss:// when given. */
  tls?: { cert: Uint8Array; key: Uint8Array }
  /** One line per session and per error. */
  log: (line: string) => void
  /** Runs one authenticated session. Resolving closes it normally; a DsyncError rejection is
   *  sent to the peer as an `error` message with its code, logged, and closes it. */
  onSession(channel: Channel, session: Session): Promise<void>
  /** Flow-control limits per session (tests lower them). */
  limits?: ChannelLimits
  /** Time allowed from connect to `welcome`; default `LIMITS.handshakeTimeoutMs`. */
  handshakeTimeoutMs?: number
  /** Versions offered in `hello`; default `SUPPORTED_VERSIONS` (tests vary it). */
  versions?: readonly number[]
}

/** A listening server. */
export interface RunningServer {
  readonly port: number
  /** ws://host:port or wss://host:port. */
  readonly url: string
  /** Stops listening and closes every session (close code 1001). */
  close(): Promise<void>
}

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true
  const h = host.replace(/^\[|\]$/g, '')
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./i.test(h)
  return false
}

/**
 * Starts a dsync server: WebSocket (over TLS when `tls` is set) on host:port. Each connection
 * does the handshake (hello → auth → welcome) and only then runs `onSession`; a failed
 * handshake gets an `error` message and a close, and the server goes on serving others.
 * Throws DsyncError USAGE for a missing token on a non-loopback host or a port it cannot bind.
 */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  if (opts.token !== null && opts.token.length === 0) {
    throw new DsyncError('USAGE', 'the token is empty; put a long random secret in the token file')
  }
  if (opts.token === null && !isLoopbackHost(opts.host)) {
    throw new DsyncError(
      'USAGE',
      `refusing to serve on ${opts.host} without a token: anyone who can reach it could read and change the tree; ` +
        'pass --token-file, or listen on 127.0.0.1',
    )
  }
  const http: HttpServer = opts.tls
    ? createHttpsServer({ cert: Buffer.from(opts.tls.cert), key: Buffer.from(opts.tls.key) })
    : createHttpServer()
  http.on('request', (_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' })
    res.end('dsync server: connect with `dsync push` or `dsync pull`\n')
  })
  // No permessage-deflate: measured 20–80 MB/s, and dsync compresses its literals itself.
  const wss = new WebSocketServer({ server: http, maxPayload: LIMITS.maxFrameBytes, perMessageDeflate: false })
  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    void serveConnection(ws, req, opts)
  })
  wss.on('error', (err) => opts.log(`server error: ${err.message}`))
  http.on('tlsClientError', (err) => opts.log(`TLS handshake failed: ${err.message}`))

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      const what = err.code === 'EADDRINUSE' ? 'is already in use; pick another with --port'
        : err.code === 'EACCES' ? 'needs privileges; pick a port above 1023'
        : err.code === 'EADDRNOTAVAIL' ? 'names an address this machine does not have; check --host'
        : `failed (${err.message})`
      reject(new DsyncError('USAGE', `listening on ${opts.host}:${opts.port} ${what}`, { cause: err }))
    }
    http.once('error', onError)
    http.listen(opts.port, opts.host, () => {
      http.off('error', onError)
      resolve()
    })
  })
  const address = http.address()
  const port = typeof address === 'object' && address !== null ? address.port : opts.port
  const hostInUrl = isIP(opts.host) === 6 ? `[${opts.host}]` : opts.host
  return {
    port,
    url: `${opts.tls ? 'wss' : 'ws'}://${hostInUrl}:${port}`,
    close: () => closeServer(http, wss),
  }
}

async function closeServer(http: HttpServer, wss: WebSocketServer): Promise<void> {
  for (const ws of wss.clients) ws.close(CLOSE.goingAway, 'server shutting down')
  // A peer that does not answer the close handshake is cut off rather than keeping us up.
  const cutoff = setTimeout(() => {
    for (const ws of wss.clients) ws.terminate()
  }, 2000)
  await new Promise<void>((resolve) => wss.close(() => resolve()))
  await new Promise<void>((resolve) => http.close(() => resolve()))
  clearTimeout(cutoff)
}

async function serveConnection(ws: WebSocket, req: IncomingMessage, opts: ServerOptions): Promise<void> {
  const remote = req.socket.remoteAddress ?? 'unknown'
  const peer = `${isIP(remote) === 6 ? `[${remote}]` : remote}:${req.socket.remotePort ?? 0}`
  const channel = new WsChannel(ws, opts.limits ?? DEFAULT_CHANNEL_LIMITS)
  // Before auth the peer is a stranger: tiny frames only, and a deadline.
  channel.setFrameLimit(LIMITS.maxHandshakeFrameBytes)
  const timeoutMs = opts.handshakeTimeoutMs ?? LIMITS.handshakeTimeoutMs
  const timer = setTimeout(() => {
    channel.fail(new DsyncError('NETWORK', `handshake not finished within ${timeoutMs} ms; closing`))
  }, timeoutMs)
  let session: Session
  try {
    session = await serverHandshake(channel, opts, peer)
  } catch (err) {
    const e = asDsyncError(err)
    opts.log(`${peer} refused: ${e.code}: ${e.message}`)
    channel.fail(e)
    return
  } finally {
    clearTimeout(timer)
  }
  channel.setFrameLimit(Infinity)
  const what = `${session.role} ${session.subdir === '' ? '/' : session.subdir}`
  opts.log(`${peer} ${what}: session started`)
  try {
    await opts.onSession(channel, session)
    channel.close(CLOSE.normal)
    opts.log(`${peer} ${what}: session done (${channel.stats.bytesReceived} bytes in, ${channel.stats.bytesSent} out)`)
  } catch (err) {
    const e = asDsyncError(err)
    opts.log(`${peer} ${what}: ${e.code}: ${e.message}`)
    channel.fail(e)
  }
}

function asDsyncError(err: unknown): DsyncError {
  if (isDsyncError(err)) return err
  return new DsyncError('INTERNAL', `internal server error: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
}
