import { lstat } from 'node:fs/promises'
import { DsyncError, isDsyncError } from '../errors.js'
import { resolveInside } from '../fs/index.js'
import { DEFAULT_IDLE_TIMEOUT_MS, withIdleTimeout, type Channel, type Session } from '../net/index.js'
import { runReceiver } from './receiver.js'
import { SyncReport } from './report.js'
import { runSender } from './sender.js'
import { ensureDirectory, SYNC_CHUNK_PARAMS, withStore } from './session.js'

/** What a served session runs against. */
export interface ServedSessionOptions {
  /** The served tree, absolute. */
  readonly root: string
  readonly log: (line: string) => void
  readonly signal: AbortSignal
  /** a session with no bytes moving either way this long is closed (default 5 min) */
  readonly idleTimeoutMs?: number
  /** Runs `fn` holding the tree (the WebSocket server's TreeLock, which tells a waiting client
   *  so over `channel`). Absent: no lock, as `serve --stdio` runs one session per process. */
  readonly hold?: (channel: Channel, fn: () => Promise<void>) => Promise<void>
}

/**
 * One session on the server side, after the handshake: the receiver role for a push, the
 * sender role for a pull, in the subdir the client named (created for a push, as rsync creates
 * its destination), and one log line of totals. The same for every transport: it is the body
 * of `serve()`'s `onSession` in src/sync/serve.ts (as of main 4761ad3), which can call it with
 * `hold: (ch, fn) => tree.hold(() => waitingNotices(ch, s.peer, o.log), fn)`.
 */
export async function runServedSession(peerChannel: Channel, s: Session, o: ServedSessionOptions): Promise<void> {
  const channel = withIdleTimeout(peerChannel, o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS)
  const base = s.subdir === '' ? o.root : await resolveInside(o.root, s.subdir)
  if (s.role === 'pull' && s.subdir !== '' && !(await isDirectory(base))) {
    // Said with the client's path, not the server's: the server's layout is its own.
    throw new DsyncError('NOT_FOUND', `/${s.subdir}: no such directory on the server; check the URL's path`)
  }
  const hold = o.hold ?? ((_channel, fn) => fn())
  await hold(channel, async () => {
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
  })
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return false
    throw err
  }
}
