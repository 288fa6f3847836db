import { lstat } from 'node:fs/promises'
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

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return false
    throw err
  }
}

/** While a session waits for the tree, the client hears so this often (it also keeps the
 *  waiting session from looking idle). */
const WAIT_NOTICE_MS = 30_000

/**
 * `dsync serve`: one tree, many clients at once. A push session runs the receiver role on the
 * server, a pull session the sender role. Sessions on the served tree run one at a time —
 * including sessions on subdirs, which overlap the root's — since two writers interleaving in
 * one tree could each pass the changed-on-receiver check against the other. A session that has
 * to wait is told so ("waiting for another session on this tree"). Each session's work ends
 * with it (SessionScope in the roles), so a vanished client frees the tree at once.
 */
export async function serve(o: ServeOptions): Promise<SyncServer> {
  const root = resolve(o.root)
  await ensureDirectory(root, false)
  const tree = new TreeLock()
  const server = await startServer({
    host: o.host,
    port: o.port,
    token: o.token,
    ...(o.tls && { tls: o.tls }),
    log: o.log,
    onSession: async (peerChannel: Channel, s) => {
      const channel = withIdleTimeout(peerChannel, o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS)
      const base = s.subdir === '' ? root : await resolveInside(root, s.subdir)
      if (s.role === 'pull' && s.subdir !== '' && !(await isDirectory(base))) {
        // Said with the client's path, not the server's: the server's layout is its own.
        throw new DsyncError('NOT_FOUND', `/${s.subdir}: no such directory on the server; check the URL's path`)
      }
      await tree.hold(
        () => waitingNotices(channel, s.peer, o.log),
        async () => {
          await ensureDirectory(base, s.role === 'push' && !s.options.dryRun)
          await withStore(base, async (store) => {
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
          })
        },
      )
    },
  })
  return server
}

/** Tells a waiting client why nothing happens yet, now and every WAIT_NOTICE_MS; returns the
 *  function that stops the notices. */
function waitingNotices(channel: Channel, peer: string, log: (line: string) => void): () => void {
  const say = (): void => {
    channel.send({ t: 'notice', message: 'waiting for another session on this tree to finish' }).catch(() => {
      // Policy: a client gone while waiting is noticed by the session itself once it starts.
    })
  }
  log(`${peer}: waiting for another session on this tree`)
  say()
  const timer = setInterval(say, WAIT_NOTICE_MS)
  return () => clearInterval(timer)
}

/**
 * One session at a time on the tree, the others queued in arrival order. `hold` runs `fn` when
 * the tree is free; if it must wait, it calls `onWait` first and the function that returns
 * when the wait is over. The tree is released however `fn` ends.
 */
class TreeLock {
  #tail: Promise<void> = Promise.resolve()
  /** sessions holding the tree or queued for it */
  #sessions = 0

  async hold(onWait: () => () => void, fn: () => Promise<void>): Promise<void> {
    const before = this.#tail
    let release!: () => void
    this.#tail = new Promise<void>((r) => (release = r))
    const stopWaiting = this.#sessions++ > 0 ? onWait() : undefined
    try {
      await before
      stopWaiting?.()
      await fn()
    } finally {
      stopWaiting?.()
      this.#sessions--
      release()
    }
  }
}
