import { resolve } from 'node:path'
import { DsyncError } from '../errors.js'
import { CLOSE, connectTransport, type Role, type SessionOptions } from '../net/index.js'
import { runReceiver } from './receiver.js'
import { SyncReport, type FileEvent } from './report.js'
import { runSender } from './sender.js'
import { ensureDirectory, sessionOptions, SYNC_CHUNK_PARAMS, withStore, type SyncResult } from './session.js'

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
  /** bytes of files settled so far, bytes of all files listed so far */
  readonly onProgress?: (settledBytes: number, totalBytes: number) => void
  /** (push) each piece of file data sent, in bytes */
  readonly onBytes?: (bytes: number) => void
  /** what the server says that concerns no file (e.g. that it waits for another session) */
  readonly onNotice?: (message: string) => void
}

/**
 * One client session: opens the local tree's store, connects (WebSocket or ssh, by the URL's
 * form), and runs the local role — the sender for a push, the receiver for a pull (which
 * creates the local directory if needed).
 */
async function runClient(role: Role, localDir: string, url: string, o: ClientOptions): Promise<SyncResult> {
  const root = resolve(localDir)
  // A push needs its tree first; a pull creates its directory (and state) only once the server
  // has let it in: a wrong token or a wrong URL leaves nothing behind.
  if (role === 'push') await ensureDirectory(root, false)
  const options = sessionOptions(o)
  const transport = await connectTransport(url, {
    token: o.token, role, options, signal: o.signal,
    ...(o.ca && { ca: o.ca }), ...(o.rsh !== undefined && { rsh: o.rsh }), ...(o.remoteDsync !== undefined && { remoteDsync: o.remoteDsync }),
  })
  const { channel } = transport
  // Ctrl+C: end the session at once, so neither side waits on the other.
  const stop = (): void => channel.close(CLOSE.goingAway, 'interrupted')
  o.signal.addEventListener('abort', stop, { once: true })
  try {
    if (role === 'pull') await ensureDirectory(root, !o.dryRun)
    const result = await withStore(root, async (store) => {
      const report = new SyncReport(o.onEvent, o.onProgress)
      const deps = { root, store, params: SYNC_CHUNK_PARAMS, options, report, signal: o.signal, ...(o.onNotice && { onNotice: o.onNotice }) }
      const started = Date.now()
      if (role === 'push') await runSender(channel, { ...deps, ...(o.onBytes && { onBytes: o.onBytes }) })
      else await runReceiver(channel, { ...deps, now: () => new Date() })
      return { events: report.events, summary: report.summary(channel.stats, Date.now() - started) }
    })
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

/** `dsync pull URL LOCAL_DIR`: the server sends, this side receives (creating LOCAL_DIR if needed). */
export function pull(url: string, localDir: string, o: ClientOptions): Promise<SyncResult> {
  return runClient('pull', localDir, url, o)
}
