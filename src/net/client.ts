import type { IncomingMessage } from 'node:http'
import type { ClientOptions, WebSocket } from 'ws'
import { DsyncError } from '../errors.js'
import { LIMITS } from '../../protocol/messages.js'
import { CLOSE, DEFAULT_CHANNEL_LIMITS, type Channel, type ChannelLimits } from './channel.js'
import { checkRelPath } from '../fs/index.js'
import { CLOSE_TIMEOUT_MS, WsChannel, type WithCloseTimeout } from './connection.js'
import { clientHandshake, localVersions } from './handshake.js'
import { DEFAULT_HEARTBEAT_MS } from './heartbeat.js'
import type { Role, SessionOptions } from './messages.js'

/** The port `dsync serve` listens on by default, used when a URL names none. */
export const DEFAULT_PORT = 8730

/** How to connect. */
export interface ConnectOptions {
  /** The shared secret; null to connect to a tokenless (loopback) server. */
  token: string | null
  role: Role
  options: SessionOptions
  /** PEM CA certificate(s) to trust for wss:// (e.g. the server's self-signed certificate). */
  ca?: Uint8Array
  /** false accepts any certificate (insecure; for testing only). Default true. */
  rejectUnauthorized?: boolean
  signal?: AbortSignal
  /** Flow-control limits (tests lower them). */
  limits?: ChannelLimits
  /** Time allowed from connect to `welcome`; default `LIMITS.handshakeTimeoutMs`. */
  handshakeTimeoutMs?: number
  /** Versions this client may pick; default `SUPPORTED_VERSIONS` (tests vary it). */
  versions?: readonly number[]
  /** Ping interval, ms (0: none); default `DEFAULT_HEARTBEAT_MS`. A server that stops
   *  answering is cut and the session fails with NETWORK. */
  heartbeatMs?: number
}

/** A parsed `ws[s]://host[:port][/subdir]`. */
export interface DsyncUrl {
  /** The WebSocket URL to open (no path). */
  readonly wsUrl: string
  /** '' for the served root, else a safe relative path. */
  readonly subdir: string
}

/** Parses a dsync URL. Throws DsyncError USAGE naming what is wrong with it. */
export function parseDsyncUrl(url: string): DsyncUrl {
  let u: URL
  try {
    u = new URL(url)
  } catch (err) {
    throw new DsyncError('USAGE', `not a URL: ${JSON.stringify(url)}; expected ws://host:port/subdir, wss://..., ssh://[user@]host/path or host:path`, { cause: err })
  }
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') {
    throw new DsyncError('USAGE', `${url}: the scheme must be ws://, wss:// or ssh://, not ${u.protocol}//`)
  }
  if (u.username !== '' || u.password !== '') {
    throw new DsyncError('USAGE', `${url}: no credentials in the URL; pass the token with --token-file or DSYNC_TOKEN`)
  }
  if (u.search !== '' || u.hash !== '') throw new DsyncError('USAGE', `${url}: no ?query or #fragment allowed`)
  // URL resolves '.' and '..' segments away; refuse them as written instead of guessing.
  const written = url.replace(/^[a-z]+:\/\/[^/]*/i, '').split('/')
  if (written.some((seg) => /^(\.|%2e){1,2}$/i.test(seg))) {
    throw new DsyncError('USAGE', `${url}: '.' and '..' are not allowed in the subdir`)
  }
  let path: string
  try {
    path = decodeURIComponent(u.pathname).replace(/^\//, '').replace(/\/$/, '')
  } catch (err) {
    throw new DsyncError('USAGE', `${url}: the path is not valid percent-encoding`, { cause: err })
  }
  try {
    if (path !== '') checkRelPath(path)
  } catch (err) {
    throw new DsyncError('USAGE', `${url}: the subdir ${JSON.stringify(path)} is not a safe relative path`, { cause: err })
  }
  // URL drops a port equal to the scheme's default (80, 443): keep one the user wrote out.
  const writtenPort = /^wss?:\/\/(?:\[[^\]]*\]|[^/?#:]*)(?::(\d+))?/i.exec(url)?.[1]
  const port = u.port || writtenPort || String(DEFAULT_PORT)
  return { wsUrl: `${u.protocol}//${u.hostname}:${port}/`, subdir: path }
}

/**
 * Connects to a dsync server and does the handshake: picks the highest common protocol
 * version, proves the token and checks the server's proof. Returns the channel, ready for the
 * session, and the subdir from the URL. Throws DsyncError: USAGE (bad URL), NETWORK (cannot
 * connect; the message names the URL and what to check), AUTH_FAILED, PROTOCOL_VERSION,
 * BAD_MESSAGE, ABORTED.
 */
/**
 * Frames go unmasked (an all-zero masking key, which ws then skips). RFC 6455 masking keeps a
 * hostile script in a browser from choosing the bytes a proxy sees; dsync's client is not a
 * browser and sends its own data, so the key protects nothing here. It cost the client 1.5 s
 * of 5 s CPU pushing a new 256 MiB file (ws's JavaScript `_mask` over every byte; the server
 * then unmasks it again), and the key is still sent and honoured as the protocol requires.
 */
function zeroMask(mask: Uint8Array): void {
  mask.fill(0)
}

export async function connect(url: string, opts: ConnectOptions): Promise<{ channel: Channel; subdir: string; version: number }> {
  const { wsUrl, subdir } = parseDsyncUrl(url)
  if (opts.signal?.aborted) throw aborted()
  const timeoutMs = opts.handshakeTimeoutMs ?? LIMITS.handshakeTimeoutMs
  const wsOptions: WithCloseTimeout<ClientOptions> = {
    maxPayload: LIMITS.maxFrameBytes,
    perMessageDeflate: false,
    handshakeTimeout: timeoutMs,
    closeTimeout: CLOSE_TIMEOUT_MS,
    generateMask: zeroMask,
    ...(opts.ca === undefined ? {} : { ca: Buffer.from(opts.ca) }),
    ...(opts.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: opts.rejectUnauthorized }),
  }
  // Loaded here, not at startup: see LAZY_LOAD in src/cli/main.ts.
  const { WebSocket } = await import('ws')
  if (opts.signal?.aborted) throw aborted() // while it loaded
  const ws = new WebSocket(wsUrl, wsOptions)
  // The versions this side speaks load a hash (handshake.ts): while the socket opens, not after
  // the server's hello (a no-op push of 10 files took ~15 ms longer so).
  void localVersions()
  const channel = new WsChannel(ws, opts.limits ?? DEFAULT_CHANNEL_LIMITS, opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS)
  const onAbort = (): void => channel.fail(aborted(), CLOSE.goingAway)
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(() => {
    channel.fail(new DsyncError('NETWORK', `${url}: the server did not finish the handshake within ${timeoutMs} ms`))
  }, timeoutMs)
  try {
    await opened(ws, url)
    const version = await clientHandshake(channel, opts, subdir, url)
    return { channel, subdir, version }
  } catch (err) {
    if (opts.signal?.aborted) throw aborted()
    channel.close(CLOSE.normal)
    if (ws.readyState === ws.CONNECTING) ws.terminate()
    throw err
  } finally {
    clearTimeout(timer)
    opts.signal?.removeEventListener('abort', onAbort)
  }
}

/** Waits for the WebSocket to open; maps failures to DsyncError NETWORK saying what to check. */
function opened(ws: WebSocket, url: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onOpen = (): void => {
      ws.off('error', onError)
      resolve()
    }
    const onError = (err: Error & { code?: string }): void => {
      ws.off('open', onOpen)
      ws.off('unexpected-response', onResponse)
      reject(new DsyncError('NETWORK', `cannot connect to ${url}: ${explainConnectError(err)}`, { cause: err }))
    }
    // A server at its connection cap answers the upgrade with 503 and says why in the body.
    const onResponse = (_req: unknown, res: IncomingMessage): void => {
      ws.off('open', onOpen)
      ws.off('error', onError)
      void refusal(res).then(
        (why) => reject(res.statusCode === 503
          ? new DsyncError('BUSY', `${url}: ${why || 'the server is busy'}`)
          : new DsyncError('NETWORK', `cannot connect to ${url}: the server answered HTTP ${res.statusCode ?? '?'} ${why}; is it a dsync server?`)),
      )
    }
    ws.once('open', onOpen)
    ws.once('error', onError)
    ws.once('unexpected-response', onResponse)
  })
}

/** The first line of a refusal's body (at most 4 KiB read), without the server's name prefix. */
async function refusal(res: IncomingMessage): Promise<string> {
  let body = ''
  try {
    for await (const piece of res) {
      body += String(piece)
      if (body.length > 4096) break
    }
  } catch (err) {
    // The body is only the reason's text; the status code alone still says what happened.
    void err
  }
  res.destroy()
  return (body.split('\n')[0] ?? '').replace(/^dsync server: /, '').slice(0, 4096)
}

function explainConnectError(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused; is `dsync serve` running there, and is the port right?'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found; check the host name'
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return 'host unreachable; check the address and any firewall between'
    case 'ECONNRESET':
      return 'connection reset; is it a dsync server, and does it expect wss:// (TLS) or ws://?'
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return `the server's TLS certificate is not trusted (${err.code}); pass its certificate as the CA`
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return "the server's TLS certificate does not name this host; connect with the name it was issued for"
    case 'EPROTO':
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
      return 'TLS handshake failed; does the server speak ws:// rather than wss://?'
    default:
      return `${err.message}; check the URL and that a dsync server is listening there`
  }
}

function aborted(): DsyncError {
  return new DsyncError('ABORTED', 'connection aborted')
}
