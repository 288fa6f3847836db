import { resolve } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { DsyncError } from '../errors.js'
import { CLOSE, localVersions, serveChannel, StreamChannel } from '../net/index.js'
import { runServedSession } from './served-session.js'
import { TreeLock } from './tree-lock.js'

/** `dsync serve --stdio`: what it serves and where its bytes go. */
export interface ServeStdioOptions {
  /** The tree; for a push it is created when missing (rsync creates its destination too). */
  readonly root: string
  /** Frames from the client (the process's stdin, through ssh). */
  readonly input: Readable
  /** Frames to the client (the process's stdout): nothing else may be written there. */
  readonly output: Writable
  /** Log lines: never on `output`. */
  readonly log: (line: string) => void
  readonly signal: AbortSignal
  /** a session with no bytes moving either way this long is closed (default 5 min) */
  readonly idleTimeoutMs?: number
}

/**
 * One session over a byte-stream pair, as `dsync serve --stdio` runs it behind ssh: the same
 * handshake (no token: ssh authenticated the peer) and the same session code as `dsync serve`.
 * Resolves when the session is over, however it ended; its outcome reached the client.
 */
export async function serveStdio(o: ServeStdioOptions): Promise<void> {
  const root = resolve(o.root)
  // What `hello` offers is known before the first byte is read: a peer's first frame, whatever
  // it is, meets a server that has said hello (handshake.ts loads a hash to know it).
  await localVersions()
  if (o.signal.aborted) return
  const channel = new StreamChannel(o.input, o.output)
  const stop = (): void => channel.fail(new DsyncError('ABORTED', 'the server was stopped'), CLOSE.goingAway)
  o.signal.addEventListener('abort', stop, { once: true })
  try {
    await serveChannel(
      channel,
      {
        token: null,
        log: o.log,
        onSession: (ch, session) =>
          runServedSession(ch, session, { root, log: o.log, signal: o.signal, lock: new TreeLock(root), ...(o.idleTimeoutMs !== undefined && { idleTimeoutMs: o.idleTimeoutMs }) }),
      },
      'stdio',
    )
  } finally {
    o.signal.removeEventListener('abort', stop)
  }
}
