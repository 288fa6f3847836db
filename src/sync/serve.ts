import { resolve } from 'node:path'
import { startServer, type ServerLimits } from '../net/index.js'
import { runServedSession } from './served-session.js'
import { ensureDirectory } from './session.js'
import { DEFAULT_MAX_WAITING_PER_TREE, TreeLock } from './tree-lock.js'

export interface ServeOptions {
  readonly root: string
  readonly host: string
  readonly port: number
  readonly token: string | null
  readonly tls?: { cert: Uint8Array; key: Uint8Array }
  readonly log: (line: string) => void
  readonly signal: AbortSignal
  /** a session with no bytes moving either way this long is closed (default 5 min) */
  readonly idleTimeoutMs?: number
  /** caps on connections and sessions, for `startServer` (defaults: `DEFAULT_SERVER_LIMITS`) */
  readonly limits?: Partial<ServerLimits>
  /** sessions that may queue for the tree behind the running one; the next gets BUSY (default 8) */
  readonly maxWaitingPerTree?: number
  /** protocol versions offered (default: all this build speaks); tests play an older server */
  readonly versions?: readonly number[]
}

/** A running `dsync serve`. */
export interface SyncServer {
  readonly port: number
  readonly url: string
  close(): Promise<void>
}

/**
 * `dsync serve`: one tree, many clients at once. A push session runs the receiver role on the
 * server, a pull session the sender role. Sessions on the served tree run one at a time —
 * including sessions on subdirs, which overlap the root's — since two writers interleaving in
 * one tree could each pass the changed-on-receiver check against the other (TreeLock, which
 * also holds the tree against other processes). A session that has to wait is told so
 * ("waiting for another session on this tree"). Each session's work ends with it
 * (SessionScope in the roles), so a vanished client frees the tree at once.
 */
export async function serve(o: ServeOptions): Promise<SyncServer> {
  const root = resolve(o.root)
  await ensureDirectory(root, false)
  const tree = new TreeLock(root, o.maxWaitingPerTree ?? DEFAULT_MAX_WAITING_PER_TREE)
  const server = await startServer({
    host: o.host,
    port: o.port,
    token: o.token,
    ...(o.tls && { tls: o.tls }),
    log: o.log,
    ...o.limits,
    ...(o.versions && { versions: o.versions }),
    onSession: (channel, s) =>
      runServedSession(channel, s, { root, log: o.log, signal: o.signal, lock: tree, ...(o.idleTimeoutMs !== undefined && { idleTimeoutMs: o.idleTimeoutMs }) }),
  })
  return server
}
