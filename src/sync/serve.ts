import { resolve } from 'node:path'
import { DsyncError, isDsyncError } from '../errors.js'
import { resolveInside } from '../fs/index.js'
import { DEFAULT_IDLE_TIMEOUT_MS, startServer, withIdleTimeout, type Channel } from '../net/index.js'
import { runReceiver } from './receiver.js'
import { SyncReport } from './report.js'
import { runSender } from './sender.js'
import { ensureDirectory, SYNC_CHUNK_PARAMS, withStore } from './session.js'

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
}

/** A running `dsync serve`. */
export interface SyncServer {
  readonly port: number
  readonly url: string
  close(): Promise<void>
}

/**
 * `dsync serve`: one tree, many clients at once. A push session runs the receiver role on the
 * server, a pull session the sender role. Sessions on the same tree are serialized: two writers
 * interleaving in one tree could each pass the changed-on-receiver check against the other.
 */
export async function serve(o: ServeOptions): Promise<SyncServer> {
  const root = resolve(o.root)
  await ensureDirectory(root, false)
  const locks = new Map<string, Promise<void>>()
  const exclusive = async (key: string, fn: () => Promise<void>): Promise<void> => {
    const before = locks.get(key) ?? Promise.resolve()
    const mine = before.then(fn, fn)
    const tail = mine.catch(() => undefined)
    locks.set(key, tail)
    try {
      await mine
    } finally {
      if (locks.get(key) === tail) locks.delete(key)
    }
  }
  const server = await startServer({
    host: o.host,
    port: o.port,
    token: o.token,
    ...(o.tls && { tls: o.tls }),
    log: o.log,
    onSession: async (peerChannel: Channel, s) => {
      const channel = withIdleTimeout(peerChannel, o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS)
      const base = s.subdir === '' ? root : await resolveInside(root, s.subdir)
      await ensureDirectory(base, s.role === 'push' && !s.options.dryRun)
      await exclusive(base, () =>
        withStore(base, async (store) => {
          const report = new SyncReport()
          const started = Date.now()
          const deps = { root: base, store, params: SYNC_CHUNK_PARAMS, options: s.options, report, signal: o.signal }
          try {
            if (s.role === 'push') await runReceiver(channel, { ...deps, now: () => new Date() })
            else await runSender(channel, deps)
          } catch (err) {
            throw isDsyncError(err) ? err : new DsyncError('INTERNAL', `session failed: ${String(err)}`, { cause: err })
          }
          const sum = report.summary(channel.stats, Date.now() - started)
          o.log(
            `${s.peer} ${s.role} /${s.subdir}: ${sum.files} files, ${sum.transferred} transferred, ${sum.copied} copied, ` +
              `${sum.deleted} deleted, ${sum.conflicts} conflicts, ${sum.errors} errors; ` +
              `${channel.stats.bytesReceived} B in, ${channel.stats.bytesSent} B out, ${sum.durationMs} ms`,
          )
        }),
      )
    },
  })
  return server
}
