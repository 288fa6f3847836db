import { DsyncError } from '../errors.js'
import { CLOSE, wrapChannel, type Channel } from './channel.js'

/**
 * A session with no bytes moving either way for this long is dead or stalled: the server ends
 * it, so a peer that stops talking cannot hold a tree's session lock (and its files) forever.
 * Generous, because a receiver may be silent while it reads a large seed for its signature
 * (10 GB at ~300 MB/s: half a minute).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60 * 1000

/**
 * Wraps a channel so that `messages()` fails with DsyncError NETWORK, and the connection is
 * closed, once no byte has been sent or received for `ms`. Traffic in either direction counts:
 * a sender streaming a large file hears nothing back for a long time, and that is not idle.
 *
 * The watchdog closes the channel, which ends its message stream at once; it does not race
 * each message against a long-lived "stalled" promise: every Promise.race on such a promise
 * leaves a reaction on it that holds the race's result, so a session kept every message it
 * received (a 1 GiB push held ~1.3 GB on the server until the session ended).
 */
export function withIdleTimeout(channel: Channel, ms: number = DEFAULT_IDLE_TIMEOUT_MS): Channel {
  const moved = (): number => channel.stats.bytesSent + channel.stats.bytesReceived
  return wrapChannel(channel, {
    async *messages() {
      let last = moved()
      let idle = false
      let timer: NodeJS.Timeout | undefined
      const watch = (): void => {
        timer = setTimeout(() => {
          const now = moved()
          if (now !== last) {
            last = now
            watch()
            return
          }
          idle = true
          channel.close(CLOSE.goingAway, 'idle')
        }, ms)
      }
      const idleError = (): DsyncError =>
        new DsyncError('NETWORK', `no data moved either way for ${Math.round(ms / 1000)} s; the session was closed`)
      watch()
      try {
        for await (const msg of channel.messages()) {
          if (idle) throw idleError()
          yield msg
        }
      } catch (err) {
        throw idle ? idleError() : err
      } finally {
        clearTimeout(timer)
      }
      if (idle) throw idleError()
    },
  })
}
