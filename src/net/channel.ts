import { DsyncError, type ErrorCode } from '../errors.js'
import { KNOWN_ERROR_CODES, decode, encode } from './codec.js'
import { InboundQueue, type QueueLimits } from './inbound-queue.js'
import type { Message } from './messages.js'

/** What the sync roles talk to: one session's ordered, validated message stream both ways. */
export interface Channel {
  /** Sends one message. Resolves when the transport has flushed it; waits first while too
   *  much is already buffered. Rejects with DsyncError NETWORK when the connection is gone,
   *  INTERNAL when the message breaks a protocol limit. */
  send(msg: Message): Promise<void>
  /** Each inbound message once, in order. Ends when the peer closes normally; throws a
   *  DsyncError on an `error` message from the peer (with its code), a malformed frame
   *  (BAD_MESSAGE) or an abnormal close (NETWORK). Reading is paused while the consumer lags. */
  messages(): AsyncIterable<Message>
  /** Closes the session: 1000 (the default) is a normal end. */
  close(code?: number, reason?: string): void
  /** Ends the session for `err`: tells the peer why (an `error` message, best effort), closes
   *  (1008), and makes the local `messages()` throw `err`. */
  fail(err: DsyncError): void
  /** Frame payload bytes sent and received on this session, handshake included. */
  readonly stats: { bytesSent: number; bytesReceived: number }
}

/**
 * `channel` with some of its parts replaced: what a wrapper (idle timeout, bandwidth limit, a
 * two-way sync phase, a tap on the file lists) does not override passes straight through.
 */
export function wrapChannel(channel: Channel, parts: { send?: Channel['send']; messages?: Channel['messages'] }): Channel {
  return {
    send: parts.send ?? ((msg) => channel.send(msg)),
    messages: parts.messages ?? (() => channel.messages()),
    close: (code, reason) => channel.close(code, reason),
    fail: (err) => channel.fail(err),
    get stats() {
      return channel.stats
    },
  }
}

/** Flow-control limits of a channel. */
export interface ChannelLimits extends QueueLimits {
  /** `send` waits while more than this many bytes are buffered unsent. */
  readonly sendHighWaterBytes: number
}

/**
 * Default limits. Memory per session stays near 2 MiB inbound + 4 MiB outbound + one frame.
 * Both sides of a 1 MiB `data` stream keep a few frames in flight, enough to fill loopback.
 * Inbound was 8 MiB: 2 MiB is as fast here, and with the file queue's 2 MiB (ByteQueue) a new
 * 1 GiB file's receiver peaked at 112–119 MiB instead of 126–131 (bench/README "Speed at
 * scale", "Garbage collection under bulk data, and the queues").
 */
export const DEFAULT_CHANNEL_LIMITS: ChannelLimits = Object.freeze({
  maxQueuedBytes: 2 * 1024 * 1024,
  maxQueuedMessages: 4096,
  sendHighWaterBytes: 4 * 1024 * 1024,
})

/** WebSocket close codes dsync uses (RFC 6455 §7.4.1). */
export const CLOSE = Object.freeze({
  normal: 1000,
  goingAway: 1001,
  unsupportedData: 1003,
  abnormal: 1006,
  policy: 1008,
  tooBig: 1009,
})

/**
 * The transport-independent half of a channel: encode on send, decode + validate on receive,
 * byte counts, the inbound queue, and what errors and closes mean. `connection.ts` (WebSocket),
 * `stream-channel.ts` (a byte stream: ssh, stdio) and the in-memory pair below supply `writeFrame`, `closeTransport` and flow control.
 */
export abstract class FrameChannel implements Channel {
  readonly stats = { bytesSent: 0, bytesReceived: 0 }
  protected readonly inbound: InboundQueue
  /** Set once the session is over for sending: closed by us, by the peer, or failed. */
  protected closed = false
  /** The largest inbound frame accepted right now; the server lowers it until the handshake
   *  is done. Each transport enforces it where it can: a byte stream before allocating. */
  protected frameLimit = Infinity

  constructor(protected readonly limits: ChannelLimits) {
    this.inbound = new InboundQueue(limits, { pause: () => this.pauseTransport(), resume: () => this.resumeTransport() })
  }

  /** True when the transport can take another frame now (its buffer is under the high-water mark). */
  protected abstract canWrite(): boolean
  /** Resolves at the next event that may make `canWrite` true (a flush, a resume, a close). */
  protected abstract writableChange(): Promise<void>
  /** Writes one frame; resolves when flushed. Must start the write synchronously, so that a
   *  sender that found the transport writable has claimed its room before the next one checks. */
  protected abstract writeFrame(frame: Uint8Array): Promise<void>
  protected abstract closeTransport(code: number, reason: string): void
  protected abstract pauseTransport(): void
  protected abstract resumeTransport(): void

  /** Refuses inbound frames over `bytes` (BAD_MESSAGE) until raised again. */
  setFrameLimit(bytes: number): void {
    this.frameLimit = bytes
  }

  /** Bytes of inbound frames not yet taken by the consumer. */
  get queuedBytes(): number {
    return this.inbound.queuedBytes
  }

  async send(msg: Message): Promise<void> {
    if (this.closed) throw await this.closedError(msg)
    // Wait before encoding, so concurrent senders hold no encoded frames while they wait; and
    // check, encode and write with no await between, so each sender that passes claims its room.
    while (!this.canWrite()) {
      await this.writableChange()
      if (this.closed) throw await this.closedError(msg)
    }
    const frame = encode(msg)
    this.stats.bytesSent += frame.length
    await this.writeFrame(frame)
  }

  /** What a send on a closed channel throws. A transport that can say why its peer went (a
   *  remote shell's exit status: StreamChannel) says that instead. */
  protected closedError(msg: Message): DsyncError | Promise<DsyncError> {
    return new DsyncError('NETWORK', `connection closed; cannot send '${msg.t}'`)
  }

  /** The next inbound message, or null after a normal close. Same errors as `messages()`. */
  receive(): Promise<Message | null> {
    return this.next()
  }

  async *messages(): AsyncGenerator<Message, void, undefined> {
    for (;;) {
      const msg = await this.next()
      if (msg === null) return
      yield msg
    }
  }

  /** The next message, decoded as it is taken (InboundQueue says why). A frame that does not
   *  decode ends the session (BAD_MESSAGE, told to the peer); the peer's `error` ends it too. */
  private async next(): Promise<Message | null> {
    const frame = await this.inbound.next()
    if (frame === null) return null
    let msg: Message
    try {
      msg = decode(frame)
    } catch (err) {
      const e = err instanceof DsyncError ? err : new DsyncError('BAD_MESSAGE', 'undecodable message', { cause: err })
      this.inbound.abort(e)
      this.fail(e)
      throw e
    }
    if (msg.t === 'error') {
      const e = errorFromPeer(msg.code, msg.message)
      this.inbound.abort(e)
      throw e
    }
    return msg
  }

  /** Closes the session. The local message stream ends at once — normally for 1000, else with
   *  NETWORK — without waiting for the peer to answer the close (a vanished one never does). */
  close(code: number = CLOSE.normal, reason = ''): void {
    if (this.closed) return
    this.closed = true
    this.inbound.end(code === CLOSE.normal ? null : new DsyncError('NETWORK', `session closed here${reason === '' ? '' : ` (${reason})`}`))
    this.closeTransport(code, reason)
  }

  /**
   * Ends the session for `err`: tells the peer (an `error` message, best effort), closes, and
   * makes the local `messages()` throw `err`. Used for the peer's bad input and by the server.
   */
  fail(err: DsyncError, closeCode: number = CLOSE.policy): void {
    this.inbound.end(err)
    if (this.closed) return
    this.send({ t: 'error', code: err.code, message: err.message }).catch(() => {
      // The peer may already be gone; the close below and the local error are what matter.
    })
    this.close(closeCode, err.code)
  }

  /** Handles one inbound binary frame. */
  protected onFrame(frame: Uint8Array): void {
    this.stats.bytesReceived += frame.length
    this.inbound.push(frame)
  }

  /** Handles the transport's close, whoever started it. */
  protected onClosed(code: number, reason: string): void {
    this.closed = true
    this.inbound.end(closeError(code, reason))
  }
}

/** The DsyncError a received `error` message stands for. Codes this build does not know
 *  (from a newer peer) keep their text in the message. */
export function errorFromPeer(code: string, message: string): DsyncError {
  if (KNOWN_ERROR_CODES.has(code)) return new DsyncError(code as ErrorCode, message)
  return new DsyncError('INTERNAL', `peer error ${code}: ${message}`)
}

/** What a close means for `messages()`: null (a normal end) or the error to throw. */
export function closeError(code: number, reason: string): DsyncError | null {
  const why = reason === '' ? '' : ` (${reason})`
  switch (code) {
    case CLOSE.normal:
      return null
    case CLOSE.goingAway:
      return new DsyncError('NETWORK', `the peer went away mid-session${why}; run the command again`)
    case CLOSE.tooBig:
      return new DsyncError('BAD_MESSAGE', `the peer refused a message over its size limit${why}`)
    case CLOSE.unsupportedData:
      return new DsyncError('BAD_MESSAGE', `the peer refused a message it cannot read${why}`)
    default:
      return new DsyncError('NETWORK', `connection closed unexpectedly (code ${code}${why}); check the network and the peer's log`)
  }
}

/** One end of an in-memory pair: frames go through the codec, so stats and validation are real. */
class MemoryChannel extends FrameChannel {
  peer: MemoryChannel | null = null
  private paused = false
  private drained: (() => void)[] = []

  protected canWrite(): boolean {
    const peer = this.peer
    return peer === null || !peer.paused || peer.inbound.ended
  }

  protected writableChange(): Promise<void> {
    const peer = this.peer
    return new Promise<void>((resolve) => (peer ?? this).drained.push(resolve))
  }

  protected async writeFrame(frame: Uint8Array): Promise<void> {
    const peer = this.peer
    if (peer === null || peer.closed) throw new DsyncError('NETWORK', 'in-memory peer closed')
    // Deliver a copy: the encoder's buffer is ours, the peer's decoded views must not alias it.
    const copy = frame.slice()
    await new Promise<void>((resolve) => setImmediate(resolve))
    peer.onFrame(copy)
  }

  protected closeTransport(code: number, reason: string): void {
    const peer = this.peer
    setImmediate(() => {
      this.onClosed(code, reason)
      peer?.onClosed(code, reason)
      this.releaseWriters()
      peer?.releaseWriters()
    })
  }

  protected pauseTransport(): void {
    this.paused = true
  }

  protected resumeTransport(): void {
    this.paused = false
    this.releaseWriters()
  }

  private releaseWriters(): void {
    for (const w of this.drained.splice(0)) w()
  }
}

/** Two channels joined in memory, for tests: same ordering, errors, limits and byte counts
 *  as a WebSocket session. */
export function memoryChannelPair(limits: ChannelLimits = DEFAULT_CHANNEL_LIMITS): [Channel, Channel] {
  const a = new MemoryChannel(limits)
  const b = new MemoryChannel(limits)
  a.peer = b
  b.peer = a
  return [a, b]
}
