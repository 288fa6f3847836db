import { DsyncError } from '../errors.js'
import { Fifo } from './fifo.js'

/** Limits of the unconsumed inbound queue; the transport is paused above them. */
export interface QueueLimits {
  /** Pause reading when this many frame bytes wait unconsumed; resume at half. */
  readonly maxQueuedBytes: number
  /** Pause reading when this many messages wait unconsumed; resume at half. */
  readonly maxQueuedMessages: number
}

/**
 * Inbound frames waiting for the consumer, in arrival order, then an end (normal or an error).
 * Frames, not messages: the channel decodes each as it is taken, so the queue's bytes are what
 * the peer sent. A `files` list unpacks to 4 MiB from a few hundred bytes; decoded on arrival,
 * 1 MB of such frames filled a server's heap (found in review).
 * Calls `pause` when the queue goes over a limit and `resume` when it has drained to half, the
 * recipe of ws `lib/stream.js` (`if (!push(data)) ws.pause()`, resume in `_read`).
 */
export class InboundQueue {
  private readonly items = new Fifo<Uint8Array>()
  private bytes = 0
  private paused = false
  private terminal: { error: DsyncError | null } | null = null
  private waiter: ((v: void) => void) | null = null

  constructor(
    private readonly limits: QueueLimits,
    private readonly flow: { pause(): void; resume(): void },
  ) {}

  /** Bytes of frames queued and not yet taken by the consumer. */
  get queuedBytes(): number {
    return this.bytes
  }

  get queuedMessages(): number {
    return this.items.length
  }

  /** True once an end (normal or error) has been recorded. */
  get ended(): boolean {
    return this.terminal !== null
  }

  /** Appends a frame; ignored after the end. */
  push(frame: Uint8Array): void {
    if (this.terminal !== null) return
    this.items.push(frame)
    this.bytes += frame.length
    if (!this.paused && (this.bytes >= this.limits.maxQueuedBytes || this.queuedMessages >= this.limits.maxQueuedMessages)) {
      this.paused = true
      this.flow.pause()
    }
    this.wake()
  }

  /** Records the end: `error` null for a normal end. The first end wins. */
  end(error: DsyncError | null): void {
    if (this.terminal !== null) return
    this.terminal = { error }
    this.wake()
  }

  /** Ends now for `error`, dropping what is queued (a frame after a bad one means nothing). */
  abort(error: DsyncError): void {
    while (this.items.length > 0) this.items.shift()
    this.bytes = 0
    this.terminal = { error }
    this.wake()
  }

  /** The next frame; null after a normal end; throws the recorded error once drained. */
  async next(): Promise<Uint8Array | null> {
    for (;;) {
      if (this.items.length > 0) return this.take()
      if (this.terminal !== null) {
        if (this.terminal.error !== null) throw this.terminal.error
        return null
      }
      await new Promise<void>((resolve) => (this.waiter = resolve))
    }
  }

  private take(): Uint8Array {
    const item = this.items.shift()!
    this.bytes -= item.length
    if (this.paused && this.bytes <= this.limits.maxQueuedBytes / 2 && this.queuedMessages <= this.limits.maxQueuedMessages / 2) {
      this.paused = false
      this.flow.resume()
    }
    return item
  }

  private wake(): void {
    const w = this.waiter
    this.waiter = null
    w?.()
  }
}
