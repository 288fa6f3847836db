import { lstat } from 'node:fs/promises'
import { DsyncError, isDsyncError } from '../errors.js'
import { resolveInside } from '../fs/index.js'
import { DEFAULT_IDLE_TIMEOUT_MS, sessionWire, withIdleTimeout, type Channel, type FileEntry, type Session } from '../net/index.js'
import { answerQuery } from './index-query.js'
import { runReceiver } from './receiver.js'
import { SyncReport, type FileEvent } from './report.js'
import { runSender } from './sender.js'
import { runSyncServer } from './two-way/sync-server.js'
import { PeerBases } from './peer-bases.js'
import { withLocalTree } from './local-tree.js'
import { SYNC_CHUNK_PARAMS } from './session.js'
import type { TreeLock } from './tree-lock.js'
import type { TreeSummary } from './tree-summary.js'

/** What a served session runs against. */
export interface ServedSessionOptions {
  /** The served tree, absolute. */
  readonly root: string
  readonly log: (line: string) => void
  readonly signal: AbortSignal
  /** a session with no bytes moving either way this long is closed (default 5 min) */
  readonly idleTimeoutMs?: number
  /** The served tree's lock: sessions (of any process) run one at a time on it. */
  readonly lock: TreeLock
}

/**
 * One session on the server side, after the handshake: the receiver role for a push, the
 * sender role for a pull, both in turn for a two-way sync, in the subdir the client named (created for a push, as rsync creates
 * its destination), and one log line of totals. The same for every transport (`serve`,
 * `serve --stdio`). A session that must wait for the tree tells its client so.
 */
export async function runServedSession(peerChannel: Channel, s: Session, o: ServedSessionOptions): Promise<void> {
  // Batching next to the wire (a version-3 client: PROTOCOL.md §4.8): the wrappers above see single messages.
  const wire = sessionWire(peerChannel, s.version)
  const channel = withIdleTimeout(wire, o.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS)
  const base = s.subdir === '' ? o.root : await resolveInside(o.root, s.subdir)
  if ((s.role === 'pull' || s.role === 'query') && s.subdir !== '' && !(await isDirectory(base))) {
    // Said with the client's path, not the server's: the server's layout is its own.
    throw new DsyncError('NOT_FOUND', `/${s.subdir}: no such directory on the server; check the URL's path`)
  }
  await o.lock.hold(() => waitingNotices(channel, s.peer, o.log), o.signal, async () => {
    if (s.role === 'query') return answerServedQuery(channel, s, base, o)
    // A dry run creates nothing here either (no directory, no state folder): withLocalTree.
    await withLocalTree(base, { create: s.role !== 'pull', dryRun: s.options.dryRun }, async (tree, store) => {
      // Push and pull keep only the events PeerBases.record reads (the failed, kept and deleted
      // ones; the log line counts); two-way sync keeps its events as they were.
      const report = new SyncReport(undefined, undefined, s.role === 'sync' ? 'all' : 'exceptions')
      const started = Date.now()
      const deps = { root: tree, store, params: SYNC_CHUNK_PARAMS, options: s.options, report, signal: o.signal, version: s.version }
      // Push and pull keep this client replica's bases as sync does (PeerBases): a dry run keeps none.
      const peer = s.role === 'sync' || s.options.dryRun ? undefined : PeerBases.open(store, s.options.replica)
      const listed = peer && {
        onListed: (entries: readonly FileEntry[]) => peer.note(entries),
        onStoodFor: (dir: string, summary: TreeSummary) => peer.noteStoodFor(dir, summary),
        onSettled: (e: FileEvent) => peer.settled(e),
      }
      try {
        if (s.role === 'push') await runReceiver(channel, { ...deps, ...listed, now: () => new Date(), ...(peer && { baseOf: (p: string) => peer.baseOf(p) }) })
        else if (s.role === 'sync') await runSyncServer(channel, s.options.replica, { ...deps, now: () => new Date() })
        else await runSender(channel, { ...deps, ...listed })
      } catch (err) {
        // The bases of files settled so far stand (PeerBases.settled): their writes end before the store closes.
        await peer?.written()
        throw isDsyncError(err) ? err : new DsyncError('INTERNAL', `session failed: ${String(err)}`, { cause: err })
      }
      const sum = report.summary(channel.stats, Date.now() - started)
      o.log(
        `${s.peer} ${s.role} /${s.subdir}: ${sum.files} files, ${sum.transferred} transferred, ${sum.copied} copied, ${sum.moved} moved, ` +
          `${sum.deleted} deleted, ${sum.conflicts} conflicts, ${sum.errors} errors; ` +
          `${channel.stats.bytesReceived} B in, ${channel.stats.bytesSent} B out, ${sum.durationMs} ms`,
      )
      // Still under the tree's lock: the next session on the tree sees these bases.
      await peer?.record(report.events)
    })
  })
}

/** A `query` session (§4.10): the tree's similarity index brought up to date and asked. It
 *  holds the tree's lock as a sync does: the index is kept in the tree's store. */
async function answerServedQuery(channel: Channel, s: Session, base: string, o: ServedSessionOptions): Promise<void> {
  const started = Date.now()
  let skipped = 0
  await withLocalTree(base, { create: false, dryRun: false }, async (tree, store) => {
    const scan = await answerQuery(channel, { root: tree, store, signal: o.signal, onSkipped: () => void skipped++ })
    const indexed = scan === undefined ? 'index as it was' : `${scan.files} files indexed, ${scan.filesRead} read, ${skipped} unreadable`
    o.log(`${s.peer} query /${s.subdir}: ${indexed}; ${channel.stats.bytesReceived} B in, ${channel.stats.bytesSent} B out, ${Date.now() - started} ms`)
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

/** While a session waits for the tree, the client hears so this often (it also keeps the
 *  waiting session from looking idle). */
const WAIT_NOTICE_MS = 30_000

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
