import { DsyncError, isDsyncError } from '../errors.js'
import { streamCheckAvailable } from '../hash/index.js'
import { FAST_CHECK_PROTOCOL_VERSION, QUERY_PROTOCOL_VERSION, SUPPORTED_VERSIONS, SYNC_PROTOCOL_VERSION } from '../../protocol/messages.js'
import { clientMac, newChallenge, serverMac, verifyMac } from './auth.js'
import type { FrameChannel } from './channel.js'
import type { Message, Role, SessionOptions } from './messages.js'

// The handshake (PROTOCOL.md §2) of both ends, over any FrameChannel: WebSocket (server.ts,
// client.ts) or a byte stream (ssh, `serve --stdio`). Deadlines and the pre-auth frame limit are
// the caller's, set on the channel (`setFrameLimit`) around these calls.

/** What a client asked for, known once the handshake has succeeded. */
export interface Session {
  readonly role: Role
  /** '' for the served root, else a safe relative path. */
  readonly subdir: string
  readonly options: SessionOptions
  /** The peer's address:port (or 'stdio'), for logs. */
  readonly peer: string
  /** The protocol version agreed. */
  readonly version: number
}

/** The first protocol version that has each role. */
const ROLE_SINCE: Readonly<Record<Role, number>> = Object.freeze({ push: 1, pull: 1, sync: SYNC_PROTOCOL_VERSION, query: QUERY_PROTOCOL_VERSION })

/** What a role is called in a message to the user. */
const ROLE_WHAT: Readonly<Record<Role, string>> = Object.freeze({
  push: 'push', pull: 'pull', sync: 'two-way sync', query: 'asking a served tree for similar files (similar, groups)',
})

/** The server's name in `hello`, for the peer's logs. */
export const SERVER_NAME = 'dsync'

let local: Promise<readonly number[]> | undefined

/**
 * The versions this build speaks on this machine: SUPPORTED_VERSIONS, less those from 6 on
 * where the XXH3-128 of §4.11 cannot load (no WebAssembly: `node --jitless`), so that no peer
 * sends this side a file it cannot check. The default of both sides of the handshake.
 */
export function localVersions(): Promise<readonly number[]> {
  local ??= streamCheckAvailable().then((ok) => (ok ? SUPPORTED_VERSIONS : SUPPORTED_VERSIONS.filter((v) => v < FAST_CHECK_PROTOCOL_VERSION)))
  return local
}

/** The server's side of the handshake. */
export interface ServerHandshakeOptions {
  /** The shared secret clients must prove; null accepts any client (loopback, or a transport
   *  that authenticated the peer already, as ssh does). */
  readonly token: string | null
  /** Versions offered in `hello`; default `localVersions()`. */
  readonly versions?: readonly number[]
  /** Called once the client has proved the token, before `welcome`; throws to refuse it
   *  (e.g. DsyncError BUSY when the server is at its session cap). */
  readonly admit?: () => void
}

/**
 * Runs the server's half: hello → auth → welcome. Throws DsyncError NETWORK (the client left),
 * BAD_MESSAGE, PROTOCOL_VERSION or AUTH_FAILED; the caller sends it to the peer and closes.
 */
export async function serverHandshake(channel: FrameChannel, opts: ServerHandshakeOptions, peer: string): Promise<Session> {
  const versions = opts.versions ?? (await localVersions())
  const serverChallenge = newChallenge()
  await channel.send({ t: 'hello', versions: [...versions], server: SERVER_NAME, challenge: serverChallenge })
  const auth = await channel.receive()
  if (auth === null) throw new DsyncError('NETWORK', 'the client left during the handshake')
  if (auth.t !== 'auth') throw new DsyncError('BAD_MESSAGE', `expected 'auth' after 'hello', got '${auth.t}'`)
  if (!versions.includes(auth.version)) {
    throw new DsyncError(
      'PROTOCOL_VERSION',
      `the client chose protocol version ${auth.version}; this server speaks ${versions.join(', ')}; upgrade dsync on the older side`,
    )
  }
  if (auth.version < ROLE_SINCE[auth.role]) {
    throw new DsyncError('PROTOCOL_VERSION', `the ${auth.role} role needs protocol version ${ROLE_SINCE[auth.role]}; the client chose ${auth.version}`)
  }
  const transcript = {
    version: auth.version, serverChallenge, clientChallenge: auth.challenge, role: auth.role, subdir: auth.subdir,
  }
  if (opts.token !== null && !verifyMac(clientMac(opts.token, transcript), auth.mac)) {
    throw new DsyncError(
      'AUTH_FAILED',
      auth.mac.length === 0
        ? 'this server requires a token; pass --token-file or set DSYNC_TOKEN'
        : 'wrong token; check --token-file or DSYNC_TOKEN on both sides',
    )
  }
  opts.admit?.()
  await channel.send({
    t: 'welcome',
    version: auth.version,
    mac: opts.token === null ? new Uint8Array(0) : serverMac(opts.token, transcript),
  })
  return { role: auth.role, subdir: auth.subdir, options: auth.options, peer, version: auth.version }
}

/** The client's side of the handshake. */
export interface ClientHandshakeOptions {
  /** The shared secret; null for a tokenless server (loopback, or behind ssh). */
  readonly token: string | null
  readonly role: Role
  readonly options: SessionOptions
  /** Versions this client may pick; default `localVersions()`. */
  readonly versions?: readonly number[]
}

/**
 * Runs the client's half: picks the highest common version, proves the token, checks the
 * server's proof. `where` (the URL) prefixes every error message. Throws DsyncError NETWORK,
 * BAD_MESSAGE, PROTOCOL_VERSION, AUTH_FAILED. Returns the version agreed.
 */
export async function clientHandshake(channel: FrameChannel, opts: ClientHandshakeOptions, subdir: string, where: string): Promise<number> {
  const hello = await receiveOrExplain(channel, where)
  if (hello.t !== 'hello') throw new DsyncError('BAD_MESSAGE', `${where}: expected 'hello' first, got '${hello.t}'`)
  const ours = opts.versions ?? (await localVersions())
  const common = ours.filter((v) => hello.versions.includes(v))
  if (common.length === 0) {
    const err = new DsyncError(
      'PROTOCOL_VERSION',
      `${where}: the server speaks protocol version ${hello.versions.join(', ') || 'none'}, this dsync speaks ` +
        `${ours.join(', ')}; upgrade dsync on the older side`,
    )
    channel.fail(err)
    throw err
  }
  const version = Math.max(...common)
  if (version < ROLE_SINCE[opts.role]) {
    const err = new DsyncError(
      'PROTOCOL_VERSION',
      `${where}: the server speaks protocol version ${hello.versions.join(', ')}; ${ROLE_WHAT[opts.role]} needs version ${ROLE_SINCE[opts.role]}: ` +
        'upgrade dsync on the server (push and pull work with it as it is)',
    )
    channel.fail(err)
    throw err
  }
  const transcript = { version, serverChallenge: hello.challenge, clientChallenge: newChallenge(), role: opts.role, subdir }
  await channel.send({
    t: 'auth',
    version,
    mac: opts.token === null ? new Uint8Array(0) : clientMac(opts.token, transcript),
    challenge: transcript.clientChallenge,
    role: opts.role,
    subdir,
    options: opts.options,
  })
  const welcome = await receiveOrExplain(channel, where)
  if (welcome.t !== 'welcome') throw new DsyncError('BAD_MESSAGE', `${where}: expected 'welcome' after 'auth', got '${welcome.t}'`)
  if (welcome.version !== version) {
    throw new DsyncError('BAD_MESSAGE', `${where}: the server welcomed version ${welcome.version}, but version ${version} was chosen`)
  }
  // Mutual auth: a client that holds a token talks only to a server that proves it holds it too.
  if (opts.token !== null && !verifyMac(serverMac(opts.token, transcript), welcome.mac)) {
    const err = new DsyncError(
      'AUTH_FAILED',
      `${where}: the server did not prove it knows the token (it has ${welcome.mac.length === 0 ? 'no token' : 'another token'}); ` +
        'check the URL and the token on both sides',
    )
    channel.fail(err)
    throw err
  }
  return version
}

/** The next handshake message; a server's `error` becomes a DsyncError naming the URL. */
async function receiveOrExplain(channel: FrameChannel, where: string): Promise<Message> {
  try {
    const msg = await channel.receive()
    if (msg === null) throw new DsyncError('NETWORK', `${where}: the server closed the connection during the handshake`)
    return msg
  } catch (err) {
    if (isDsyncError(err) && !err.message.startsWith(where)) {
      throw new DsyncError(err.code, `${where}: ${err.message}`, { cause: err })
    }
    throw err
  }
}
