import { resolve } from 'node:path'
import { CLOSE, connect, type SessionOptions } from '../net/index.js'
import { SyncReport, type FileEvent } from './report.js'
import { runSender } from './sender.js'
import { ensureDirectory, sessionOptions, SYNC_CHUNK_PARAMS, withStore, type SyncResult } from './session.js'

/** How to reach the server and what to ask of the session. */
export interface ClientOptions extends Partial<SessionOptions> {
  readonly token: string | null
  /** PEM CA certificate to trust for wss:// (self-signed servers) */
  readonly ca?: Uint8Array
  readonly signal: AbortSignal
  readonly onEvent?: (e: FileEvent) => void
  /** bytes of files settled so far, bytes of all files listed so far */
  readonly onProgress?: (settledBytes: number, totalBytes: number) => void
  /** (push) each piece of file data sent, in bytes */
  readonly onBytes?: (bytes: number) => void
}

/** `dsync push LOCAL_DIR URL`: this side sends, the server receives. */
export async function push(localDir: string, url: string, o: ClientOptions): Promise<SyncResult> {
  const root = resolve(localDir)
  await ensureDirectory(root, false)
  const options = sessionOptions(o)
  return withStore(root, async (store) => {
    const { channel } = await connect(url, { token: o.token, role: 'push', options, ...(o.ca && { ca: o.ca }), signal: o.signal })
    const report = new SyncReport(o.onEvent, o.onProgress)
    const started = Date.now()
    try {
      await runSender(channel, {
        root,
        store,
        params: SYNC_CHUNK_PARAMS,
        options,
        report,
        signal: o.signal,
        ...(o.onBytes && { onBytes: o.onBytes }),
      })
      channel.close()
    } catch (err) {
      // Not a normal close: the server must not take a half-done session for a finished one.
      channel.close(CLOSE.goingAway, 'client stopped')
      throw err
    }
    return { events: report.events, summary: report.summary(channel.stats, Date.now() - started) }
  })
}
