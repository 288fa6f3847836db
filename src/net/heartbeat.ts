import type { WebSocket } from 'ws'

/**
 * Interval between WebSocket pings, ms. A peer that vanished without a FIN (Wi-Fi drop, a
 * machine that sleeps) is noticed after two intervals at most: 20–40 s, where the idle timeout
 * (`idle-timeout.ts`, 5 min) would take five minutes. A ping costs 6 bytes each way.
 */
export const DEFAULT_HEARTBEAT_MS = 20_000

/**
 * The ws docs' heartbeat recipe (ping every interval; terminate when nothing came back since
 * the last ping), with one change: any sign of life counts, not only a pong. Pings queue behind
 * data: a pusher with 4 MiB buffered plus a few MiB in the kernel on a 1 Mbit/s uplink waits
 * ~60 s for its own ping to leave, so a strict pong rule would cut a healthy slow session.
 * Signs of life are a pong, a ping, a whole inbound message, and our own writes being flushed
 * (the socket drains only while the peer's TCP acknowledges).
 */
export class Heartbeat {
  private heard = true
  private readonly timer: NodeJS.Timeout

  /** Starts pinging `ws` (which must be open) every `intervalMs`; `onDead` runs at most once. */
  constructor(
    private readonly ws: WebSocket,
    intervalMs: number,
    private readonly onDead: () => void,
  ) {
    const heard = (): void => this.alive()
    ws.on('pong', heard)
    ws.on('ping', heard)
    ws.once('close', () => this.stop())
    this.timer = setInterval(() => this.tick(), intervalMs)
    // The socket keeps the process up while it is open; the heartbeat never should.
    this.timer.unref()
  }

  /** Records a sign of life from the peer. */
  alive(): void {
    this.heard = true
  }

  stop(): void {
    clearInterval(this.timer)
  }

  private tick(): void {
    // While we have paused reading (the consumer lags) the peer's pongs sit unread in the kernel:
    // silence then says nothing about the peer. A consumer stuck for good is the idle timeout's job.
    if (this.heard || this.ws.isPaused) {
      this.heard = false
      if (this.ws.readyState === this.ws.OPEN) this.ws.ping()
      return
    }
    this.stop()
    this.onDead()
  }
}
