import { DsyncError } from '../errors.js'
import { CLOSE, type Channel } from './channel.js'

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
 */
export function withIdleTimeout(channel: Channel, ms: number = DEFAULT_IDLE_TIMEOUT_MS): Channel {
  const moved = (): number => channel.stats.bytesSent + channel.stats.bytesReceived
  return {
    send: (msg) => channel.send(msg),
    close: (code, reason) => channel.close(code, reason),
    get stats() {
      return channel.stats
    },
    async *messages() {
      let last = moved()
      let timer: NodeJS.Timeout | undefined
      let fail: (err: DsyncError) => void = () => undefined
      const stalled = new Promise<never>((_, reject) => (fail = reject))
      stalled.catch(() => undefined)
      const watch = (): void => {
        timer = setTimeout(() => {
          const now = moved()
          if (now !== last) {
            last = now
            watch()
            return
          }
          channel.close(CLOSE.goingAway, 'idle')
          fail(new DsyncError('NETWORK', `no data moved either way for ${Math.round(ms / 1000)} s; the session was closed`))
        }, ms)
      }
      watch()
      const it = channel.messages()[Symbol.asyncIterator]()
      try {
        for (;;) {
          const next = await Promise.race([it.next(), stalled])
          if (next.done === true) return
          yield next.value
        }
      } finally {
        clearTimeout(timer)
        await it.return?.()
      }
    },
  }
}
