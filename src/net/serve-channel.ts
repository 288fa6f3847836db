import { DsyncError, isDsyncError } from '../errors.js'
import { LIMITS } from '../../protocol/messages.js'
import { CLOSE, type Channel, type FrameChannel } from './channel.js'
import { serverHandshake, type ServerHandshakeOptions, type Session } from './handshake.js'

/** What one served session needs, whatever the transport. */
export interface ChannelServerOptions extends ServerHandshakeOptions {
  /** One line per session and per error. */
  readonly log: (line: string) => void
  /** Runs the authenticated session. Resolving closes it normally; a DsyncError rejection is
   *  sent to the peer as an `error` message with its code, logged, and closes it. */
  onSession(channel: Channel, session: Session): Promise<void>
  /** Time allowed from the start to `welcome`; default `LIMITS.handshakeTimeoutMs`; null when
   *  the transport keeps its own deadline (the WebSocket server's, from TCP accept). */
  readonly handshakeTimeoutMs?: number | null
  /** Called once the handshake has succeeded, before `onSession`. */
  readonly onAuthenticated?: () => void
}

/**
 * Serves one session on an open channel: the handshake under the pre-auth frame limit and a
 * deadline, then `onSession`, then a normal close (or the error sent and a close). Resolves when
 * the session is over; never rejects. `dsync serve --stdio` runs it on its stdin/stdout, the
 * WebSocket server on each upgraded connection.
 */
export async function serveChannel(channel: FrameChannel, opts: ChannelServerOptions, peer: string): Promise<void> {
  // Before auth the peer is a stranger: tiny frames only, and a deadline.
  channel.setFrameLimit(LIMITS.maxHandshakeFrameBytes)
  const timeoutMs = opts.handshakeTimeoutMs === undefined ? LIMITS.handshakeTimeoutMs : opts.handshakeTimeoutMs
  const timer = timeoutMs === null ? undefined : setTimeout(() => {
    channel.fail(new DsyncError('NETWORK', `handshake not finished within ${timeoutMs} ms; closing`))
  }, timeoutMs)
  let session: Session
  try {
    session = await serverHandshake(channel, opts, peer)
  } catch (err) {
    const e = asDsyncError(err)
    opts.log(`${peer} refused: ${e.code}: ${e.message}`)
    channel.fail(e)
    return
  } finally {
    clearTimeout(timer)
  }
  opts.onAuthenticated?.()
  channel.setFrameLimit(Infinity)
  const what = `${session.role} ${session.subdir === '' ? '/' : session.subdir}`
  opts.log(`${peer} ${what}: session started`)
  try {
    await opts.onSession(channel, session)
    channel.close(CLOSE.normal)
    opts.log(`${peer} ${what}: session done (${channel.stats.bytesReceived} bytes in, ${channel.stats.bytesSent} out)`)
  } catch (err) {
    const e = asDsyncError(err)
    opts.log(`${peer} ${what}: ${e.code}: ${e.message}`)
    channel.fail(e)
  }
}

function asDsyncError(err: unknown): DsyncError {
  if (isDsyncError(err)) return err
  return new DsyncError('INTERNAL', `internal server error: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
}
