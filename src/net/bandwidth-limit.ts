import { setTimeout as sleep } from 'node:timers/promises'
import { wrapChannel, type Channel } from './channel.js'
import { fileDataBytes } from './messages.js'

/** Time as the bucket sees it: a seam for tests, the real clock by default. */
export interface BucketClock {
  now(): number
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

const REAL_CLOCK: BucketClock = Object.freeze({
  now: () => performance.now(),
  sleep: (ms: number, signal?: AbortSignal) => sleep(ms, undefined, signal ? { signal } : {}),
})

/**
 * A token bucket: `take(n)` returns when n more bytes fit in the rate. It holds at most one
 * second of tokens (the burst after an idle spell), and may go into debt: a 1 MiB frame under a
 * 100 KiB/s limit goes at once and the next take waits ~10 s, so the average is the rate
 * whatever the frame size. Concurrent takers queue up behind the debt in the order they came.
 * Hand-written, in one small module: a dozen lines, with an AbortSignal for Ctrl+C and a clock
 * that tests can replace.
 */
export class TokenBucket {
  #tokens: number
  #last: number

  /** @param bytesPerSecond > 0 */
  constructor(
    readonly bytesPerSecond: number,
    private readonly clock: BucketClock = REAL_CLOCK,
  ) {
    this.#tokens = bytesPerSecond
    this.#last = clock.now()
  }

  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    const now = this.clock.now()
    this.#tokens = Math.min(this.bytesPerSecond, this.#tokens + ((now - this.#last) * this.bytesPerSecond) / 1000)
    this.#last = now
    this.#tokens -= bytes
    if (this.#tokens < 0) await this.clock.sleep((-this.#tokens * 1000) / this.bytesPerSecond, signal)
  }
}

/**
 * Wraps a channel so that file data (`data` and `bundle` messages) moves at no more than `bytesPerSecond`
 * either way: sends wait for the bucket; received data is handed on only when the bucket allows,
 * and the channel stops reading the socket while its consumer lags, so TCP slows the peer's
 * sender too (a pull is limited without the server knowing of the limit). rsync's --bwlimit.
 */
export function withBandwidthLimit(channel: Channel, bytesPerSecond: number, opts: { signal?: AbortSignal; clock?: BucketClock } = {}): Channel {
  const bucket = new TokenBucket(bytesPerSecond, opts.clock)
  return wrapChannel(channel, {
    async send(msg) {
      const bytes = fileDataBytes(msg)
      if (bytes > 0) await bucket.take(bytes, opts.signal)
      return channel.send(msg)
    },
    async *messages() {
      for await (const msg of channel.messages()) {
        const bytes = fileDataBytes(msg)
        if (bytes > 0) await bucket.take(bytes, opts.signal)
        yield msg
      }
    },
  })
}
