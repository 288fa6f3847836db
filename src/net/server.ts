import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { isIP, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { ServerOptions as WsServerOptions, WebSocket, WebSocketServer } from 'ws'
import { DsyncError } from '../errors.js'
import { LIMITS } from '../../protocol/messages.js'
import { Admission, DEFAULT_SERVER_LIMITS, type ServerLimits, type Slot } from './admission.js'
import { CLOSE, DEFAULT_CHANNEL_LIMITS, type Channel, type ChannelLimits } from './channel.js'
import { CLOSE_TIMEOUT_MS, WsChannel, type WithCloseTimeout } from './connection.js'
import { DEFAULT_HEARTBEAT_MS } from './heartbeat.js'
import { localVersions, type Session } from './handshake.js'
import { serveChannel } from './serve-channel.js'
import { refuseUpgrade, Stranger } from './stranger.js'

export { type Session, SERVER_NAME } from './handshake.js'

/** How to run a server. Caps default to `DEFAULT_SERVER_LIMITS`. */
export interface ServerOptions extends Partial<ServerLimits> {
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
  /** Ping interval of every connection, ms (0: none); default `DEFAULT_HEARTBEAT_MS`. */
  heartbeatMs?: number
  /** A close handshake the peer has not answered after this long is cut (ws `terminate`);
   *  default `CLOSE_TIMEOUT_MS`. */
  closeTimeoutMs?: number
}

/** A listening server. */
export interface RunningServer {
  readonly port: number
  /** ws://host:port or wss://host:port. */
  readonly url: string
  /** Connections accepted and not yet authenticated. */
  readonly pendingHandshakes: number
  /** Authenticated sessions whose `onSession` has not settled yet. */
  readonly activeSessions: number
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
  await localVersions() // loads a hash (handshake.ts): before the first client, not during it
  const limits: ServerLimits = {
    maxPendingHandshakes: opts.maxPendingHandshakes ?? DEFAULT_SERVER_LIMITS.maxPendingHandshakes,
    maxPendingPerAddress: opts.maxPendingPerAddress ?? DEFAULT_SERVER_LIMITS.maxPendingPerAddress,
    maxSessions: opts.maxSessions ?? DEFAULT_SERVER_LIMITS.maxSessions,
  }
  const handshakeTimeoutMs = opts.handshakeTimeoutMs ?? LIMITS.handshakeTimeoutMs
  const admission = new Admission(limits, opts.log)
  const strangers = new WeakMap<Duplex, Stranger>()
  const http: HttpServer = opts.tls
    ? createHttpsServer({ cert: Buffer.from(opts.tls.cert), key: Buffer.from(opts.tls.key), handshakeTimeout: handshakeTimeoutMs })
    : createHttpServer()
  // Counted from the accept (after TLS, whose own handshake has the same deadline), so a peer that
  // never sends its HTTP request holds a slot and meets the deadline like one that never authenticates.
  http.on(opts.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    strangers.set(socket, new Stranger(socket, admission.admitConnection(socket.remoteAddress ?? 'unknown'), handshakeTimeoutMs))
  })
  http.on('request', (req, res) => {
    const slot = strangers.get(req.socket)?.slot
    if (typeof slot === 'string') {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '5', connection: 'close' })
      res.end(`dsync server: ${slot}\n`)
      return
    }
    res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' })
    res.end('dsync server: connect with `dsync push` or `dsync pull`\n')
  })
  // No permessage-deflate: measured 20–80 MB/s, and dsync compresses its literals itself.
  const wsOptions: WithCloseTimeout<WsServerOptions> = {
    noServer: true, maxPayload: LIMITS.maxFrameBytes, perMessageDeflate: false, closeTimeout: opts.closeTimeoutMs ?? CLOSE_TIMEOUT_MS,
  }
  // Loaded here, not at startup: see LAZY_LOAD in src/cli/main.ts.
  const { WebSocketServer } = await import('ws')
  const wss = new WebSocketServer(wsOptions)
  // The ws docs' upgrade recipe (noServer + handleUpgrade): a refusal is a plain HTTP answer
  // before any WebSocket state exists.
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const stranger = strangers.get(socket)
    if (stranger === undefined) {
      // Every accepted socket is a stranger until it authenticates, and upgrades only once.
      socket.destroy()
      return
    }
    if (typeof stranger.slot === 'string') {
      refuseUpgrade(socket, stranger.slot)
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      void serveConnection(ws, req, stranger, admission, opts)
    })
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
    get pendingHandshakes() {
      return admission.pendingHandshakes
    },
    get activeSessions() {
      return admission.activeSessions
    },
    close: async () => {
      await closeServer(http, wss)
      admission.stop()
    },
  }
}

async function closeServer(http: HttpServer, wss: WebSocketServer): Promise<void> {
  // Each socket is cut after the close timeout if its peer does not answer (ws `closeTimeout`).
  for (const ws of wss.clients) ws.close(CLOSE.goingAway, 'server shutting down')
  const closed = new Promise<void>((resolve) => http.close(() => resolve()))
  // Sockets not upgraded yet (a plain HTTP keep-alive, a silent stranger) would hold http.close.
  http.closeAllConnections()
  await new Promise<void>((resolve) => wss.close(() => resolve()))
  await closed
}

async function serveConnection(
  ws: WebSocket, req: IncomingMessage, stranger: Stranger, admission: Admission, opts: ServerOptions,
): Promise<void> {
  const remote = req.socket.remoteAddress ?? 'unknown'
  const peer = `${isIP(remote) === 6 ? `[${remote}]` : remote}:${req.socket.remotePort ?? 0}`
  const channel = new WsChannel(ws, opts.limits ?? DEFAULT_CHANNEL_LIMITS, opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS)
  stranger.channel = channel
  // Before auth the peer is a stranger: tiny frames only, and a deadline (Stranger).
  channel.setFrameLimit(LIMITS.maxHandshakeFrameBytes)
  let slot: Slot | undefined
  // Checked after the MAC, before `welcome`: only a peer that proved the token learns that the
  // server is full.
  const admit = (): void => {
    const s = admission.admitSession()
    if (typeof s === 'string') throw new DsyncError('BUSY', s)
    slot = s
  }
  try {
    await serveChannel(
      channel,
      {
        token: opts.token,
        ...(opts.versions && { versions: opts.versions }),
        admit,
        log: opts.log,
        onSession: opts.onSession,
        handshakeTimeoutMs: null, // the Stranger's deadline, from TCP accept
        onAuthenticated: () => stranger.done(),
      },
      peer,
    )
  } finally {
    // The session slot goes when the session is over; a refused peer's connection slot stays
    // held until its socket has closed (at most the close timeout from now): the Stranger's.
    slot?.release()
  }
}

