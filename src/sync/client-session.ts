import { stat } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import { STATE_DIR_NAME } from '../fs/index.js'
import { newReplicaId, Store, STORE_FILE_NAME } from '../store/index.js'
import { machineName } from './conflict.js'
import { runSyncClient } from './two-way/sync-client.js'
import type { Prefer, SyncPlan } from './two-way/reconcile.js'
import { DsyncError } from '../errors.js'
import { CLOSE, connectTransport, sessionWire, withBandwidthLimit, withIdleTimeout, type Role, type SessionOptions } from '../net/index.js'
import { runReceiver } from './receiver.js'
import { SyncReport, type FileEvent, type KeptEvents } from './report.js'
import { runSender } from './sender.js'
import { withLocalTree } from './local-tree.js'
import { TreeLock } from './tree-lock.js'
import { ensureDirectory, sessionOptions, SYNC_CHUNK_PARAMS, type SyncResult } from './session.js'

/** How to reach the server and what to ask of the session. */
export interface ClientOptions extends Partial<SessionOptions> {
  readonly token: string | null
  /** PEM CA certificate to trust for wss:// (self-signed servers) */
  readonly ca?: Uint8Array
  /** ssh: the remote-shell command, as rsync's -e (default `ssh`) */
  readonly rsh?: string
  /** ssh: the dsync command on the remote host, as rsync's --rsync-path (default `dsync`) */
  readonly remoteDsync?: string
  readonly signal: AbortSignal
  readonly onEvent?: (e: FileEvent) => void
  /** which events the result's `events` keeps (KeptEvents, default `all`); the summary counts
   *  every one, and onEvent sees each */
  readonly keepEvents?: KeptEvents
  /** bytes of files settled so far, bytes of all files listed so far */
  readonly onProgress?: (settledBytes: number, totalBytes: number) => void
  /** (push) each piece of file data sent, in bytes */
  readonly onBytes?: (bytes: number) => void
  /** what the server says that concerns no file (e.g. that it waits for another session) */
  readonly onNotice?: (message: string) => void
  /** end the session (NETWORK) when no byte moves either way for this long; 0 or absent: never */
  readonly idleTimeoutMs?: number
  /** file data at most this fast, either way, in bytes per second; 0 or absent: no limit */
  readonly bytesPerSecond?: number
  /** (sync) how a file changed on both sides is settled; default keep-both */
  readonly prefer?: Prefer
  /** (sync) false: deletions are not made on the other side (the file comes back); default true */
  readonly propagateDeletes?: boolean
  /** (sync) this machine's name in conflict copies; default the host name */
  readonly machine?: string
}

/** The tree's store when it has state, else undefined: nothing is created. The session uses
 *  it, after its replica id named the tree in the handshake (opened once: a second open of the
 *  store cost 3–11 ms here). */
async function existingStore(root: string): Promise<Store | undefined> {
  try {
    await stat(join(root, STATE_DIR_NAME, STORE_FILE_NAME))
  } catch {
    return undefined
  }
  return Store.open(root, { params: SYNC_CHUNK_PARAMS })
}

/**
 * One client session: opens the local tree's store, connects (WebSocket or ssh, by the URL's
 * form), and runs the local role — the sender for a push, the receiver for a pull (which
 * creates the local directory if needed; a dry run creates nothing: see withLocalTree).
 */
async function runClient(role: Role, localDir: string, url: string, o: ClientOptions): Promise<SyncResult> {
  const root = resolve(localDir)
  // A push needs its tree first; a pull creates its directory (and state) only once the server
  // has let it in: a wrong token or a wrong URL leaves nothing behind.
  if (role === 'push') await ensureDirectory(root, false)
  // Every role names this tree's replica: the server keeps what it last synced with it (push and
  // pull too: several machines pushing to one server). A tree with no state yet gets a new one.
  const opened = await existingStore(root)
  try {
    return await runSession(role, root, url, o, opened, opened?.pairBases().peekReplicaId() ?? newReplicaId())
  } finally {
    await opened?.close()
  }
}

/** The session of runClient: connects, and runs the local role on the tree at `root` (with
 *  its store, when `opened`). */
async function runSession(role: Role, root: string, url: string, o: ClientOptions, opened: Store | undefined, replica: string): Promise<SyncResult> {
  const machine = machineName(o.machine ?? hostname())
  const options = { ...sessionOptions(o), replica, machine }
  const transport = await connectTransport(url, {
    token: o.token, role, options, signal: o.signal,
    ...(o.ca && { ca: o.ca }), ...(o.rsh !== undefined && { rsh: o.rsh }), ...(o.remoteDsync !== undefined && { remoteDsync: o.remoteDsync }),
  })
  // Batching next to the wire (a version-3 server: PROTOCOL.md §4.8): the wrappers above see single messages.
  const wire = sessionWire(transport.channel, transport.version)
  const limited = o.bytesPerSecond ? withBandwidthLimit(wire, o.bytesPerSecond, { signal: o.signal }) : wire
  const channel = o.idleTimeoutMs ? withIdleTimeout(limited, o.idleTimeoutMs) : limited
  // Ctrl+C: end the session at once, so neither side waits on the other.
  const stop = (): void => channel.close(CLOSE.goingAway, 'interrupted')
  o.signal.addEventListener('abort', stop, { once: true })
  try {
    const run = (): Promise<SyncResult> =>
      withLocalTree(root, { create: role !== 'push', dryRun: options.dryRun, opened }, async (tree, store) => {
        const report = new SyncReport(o.onEvent, o.onProgress, o.keepEvents ?? 'all')
        const deps = { root: tree, store, params: SYNC_CHUNK_PARAMS, options, report, signal: o.signal, version: transport.version, ...(o.onNotice && { onNotice: o.onNotice }) }
        const started = Date.now()
        let plan: SyncPlan | undefined
        if (!options.dryRun) await store.pairBases().replicaId(replica)
        if (role === 'push') await runSender(channel, { ...deps, ...(o.onBytes && { onBytes: o.onBytes }) })
        else if (role === 'pull') await runReceiver(channel, { ...deps, now: () => new Date() })
        else {
          plan = await runSyncClient(channel, {
            ...deps, now: () => new Date(), prefer: o.prefer ?? 'keep-both', propagateDeletes: o.propagateDeletes ?? true, machine: machine!,
          })
        }
        return { events: report.events, summary: report.summary(channel.stats, Date.now() - started), ...(plan && { plan }) }
      })
    // A pull writes this tree: one writer at a time, as on a server (another pull, or a
    // `dsync serve` of this directory).
    const waiting = (): (() => void) => {
      o.onNotice?.('waiting for another dsync session on this directory to finish')
      return () => undefined
    }
    const result = role !== 'push' && !options.dryRun ? await new TreeLock(root).hold(waiting, o.signal, run) : await run()
    channel.close()
    return result
  } catch (err) {
    // Not a normal close: the server must not take a half-done session for a finished one.
    channel.close(CLOSE.goingAway, 'client stopped')
    if (o.signal.aborted) throw new DsyncError('ABORTED', 'interrupted; files already written are complete, the rest are as they were: run the command again to finish', { cause: err })
    throw err
  } finally {
    o.signal.removeEventListener('abort', stop)
    // The result is returned only once the remote side is gone: an ssh remote still closing its
    // own store must not race the next command on that tree.
    await transport.finished()
  }
}

/** `dsync push LOCAL_DIR URL`: this side sends, the server receives. */
export function push(localDir: string, url: string, o: ClientOptions): Promise<SyncResult> {
  return runClient('push', localDir, url, o)
}

/** `dsync sync LOCAL_DIR URL`: both ways, by the state of the last sync between the two trees
 *  (creating LOCAL_DIR if needed). The result has the plan. */
export function sync(localDir: string, url: string, o: ClientOptions): Promise<SyncResult> {
  return runClient('sync', localDir, url, o)
}

/** `dsync pull URL LOCAL_DIR`: the server sends, this side receives (creating LOCAL_DIR if needed). */
export function pull(url: string, localDir: string, o: ClientOptions): Promise<SyncResult> {
  return runClient('pull', localDir, url, o)
}
