import { resolve } from 'node:path'
import { CLOSE, connect } from '../net/index.js'
import type { ClientOptions } from './push.js'
import { runReceiver } from './receiver.js'
import { SyncReport } from './report.js'
import { ensureDirectory, sessionOptions, SYNC_CHUNK_PARAMS, withStore, type SyncResult } from './session.js'

/** `dsync pull URL LOCAL_DIR`: the server sends, this side receives (creating LOCAL_DIR if needed). */
export async function pull(url: string, localDir: string, o: ClientOptions): Promise<SyncResult> {
  const root = resolve(localDir)
  await ensureDirectory(root, !o.dryRun)
  const options = sessionOptions(o)
  return withStore(root, async (store) => {
    const { channel } = await connect(url, { token: o.token, role: 'pull', options, ...(o.ca && { ca: o.ca }), signal: o.signal })
    const report = new SyncReport(o.onEvent, o.onProgress)
    const started = Date.now()
    try {
      await runReceiver(channel, { root, store, params: SYNC_CHUNK_PARAMS, options, report, signal: o.signal, now: () => new Date() })
      channel.close()
    } catch (err) {
      // Not a normal close: the server must not take a half-done session for a finished one.
      channel.close(CLOSE.goingAway, 'client stopped')
      throw err
    }
    return { events: report.events, summary: report.summary(channel.stats, Date.now() - started) }
  })
}
