import type { Readable, Writable } from 'node:stream'
import { DsyncError } from '../errors.js'
import { recycleSent } from '../headroom.js'
import { LIMITS } from '../../protocol/messages.js'
import { CLOSE, DEFAULT_CHANNEL_LIMITS, FrameChannel, type ChannelLimits } from './channel.js'
import type { Message } from './messages.js'

/** Bytes of the length prefix before every frame (u32 big-endian). */
const PREFIX_BYTES = 4
/** A close record's reason is cut to this many UTF-8 bytes, as in a WebSocket close frame. */
const MAX_REASON_BYTES = 123

/** How a byte-stream channel explains the end of its input when no close record came first. */
export type EndExplainer = (cause?: Error) => Promise<DsyncError>

/**
 * A Channel over a byte stream pair (a child's stdout/stdin, or our own stdin/stdout): the
 * WebSocket session's frames, each prefixed with its length as a u32 big-endian; a zero length
 * starts a close record (u16 close code, u8 reason length, reason), the WebSocket close frame's
 * stand-in (PROTOCOL.md §1). The length is checked against the frame limit before any byte of
 * the frame is buffered, so a hostile prefix costs nothing.
 *
 * Backpressure both ways with Node's own stream signals: `send` waits while the writable holds
 * more than `sendHighWaterBytes` (until 'drain') and resolves in the write callback; inbound, the
 * readable is paused while the consumer's queue is over its limit.
 */
export class StreamChannel extends FrameChannel {
  private readonly waiters: (() => void)[] = []
  /** Unparsed input: whole chunks as they came, and how far into the first one we are. */
  private pending: Buffer[] = []
  private pendingBytes = 0
  private pendingOffset = 0
  /** True once input is over: a close record, EOF, an error, or a refused frame. */
  private inputDone = false
  private readonly explainEnd: EndExplainer
  /** Why the input ended with no close record (explainEnd), once it has: what a send after it
   *  throws too. A pull whose remote was killed as it sent its last file failed on sending
   *  `done` with "connection closed", where receiving said "killed by SIGKILL". */
  private endExplained: Promise<DsyncError> | undefined

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    opts: { limits?: ChannelLimits; explainEnd?: EndExplainer } = {},
  ) {
    super(opts.limits ?? DEFAULT_CHANNEL_LIMITS)
    this.frameLimit = LIMITS.maxFrameBytes
    this.explainEnd = opts.explainEnd ?? defaultExplainEnd
    input.on('data', (chunk: Buffer | string) => this.onData(typeof chunk === 'string' ? Buffer.from(chunk) : chunk))
    input.on('end', () => this.onInputEnd())
    input.on('error', (err: Error) => this.onInputEnd(err))
    output.on('drain', () => this.wakeSenders())
    // EPIPE and the like: the peer is gone. Reading will tell; until then, stop senders waiting.
    output.on('error', (err: Error) => {
      this.closed = true
      this.wakeSenders()
      this.onInputEnd(err)
    })
    output.on('close', () => this.wakeSenders())
  }

  /** Never above the protocol's frame limit: a byte stream has no `maxPayload` of its own. */
  override setFrameLimit(bytes: number): void {
    super.setFrameLimit(Math.min(bytes, LIMITS.maxFrameBytes))
  }

  protected canWrite(): boolean {
    return this.output.writableLength <= this.limits.sendHighWaterBytes
  }

  protected writableChange(): Promise<void> {
    return new Promise<void>((resolve) => this.waiters.push(resolve))
  }

  protected writeFrame(frame: Uint8Array): Promise<void> {
    if (this.output.destroyed || this.output.writableEnded) {
      return Promise.reject(new DsyncError('NETWORK', 'connection closed before the message could be sent'))
    }
    if (frame.length > LIMITS.maxFrameBytes) {
      // The codec keeps messages within the limit; a frame over it is our bug, not the peer's.
      return Promise.reject(new DsyncError('INTERNAL', `a ${frame.length}-byte frame is over the protocol limit of ${LIMITS.maxFrameBytes}`))
    }
    // One buffer per frame: prefix and payload in one write, and a copy, so the encoder may
    // reuse its own buffer while this one waits in the stream.
    const out = Buffer.allocUnsafe(PREFIX_BYTES + frame.length)
    out.writeUInt32BE(frame.length, 0)
    out.set(frame, PREFIX_BYTES)
    recycleSent(frame)
    return new Promise<void>((resolve, reject) => {
      this.output.write(out, (err) => {
        this.wakeSenders()
        if (!err) return resolve()
        // The peer is gone: said as reading says it (a remote shell's exit: "killed by SIGKILL"),
        // not as the pipe's EPIPE, whichever of the two the event loop brings first (under load
        // a pull whose remote was killed failed with "write EPIPE" now and then).
        this.onInputEnd(err)
        const lost = new DsyncError('NETWORK', `connection lost while sending: ${err.message}`, { cause: err })
        void (this.endExplained ?? Promise.resolve(lost)).then(reject)
      })
    })
  }

  protected closeTransport(code: number, reason: string): void {
    if (!this.output.destroyed && !this.output.writableEnded) {
      const why = Buffer.from(reason, 'utf8').subarray(0, MAX_REASON_BYTES)
      const record = Buffer.alloc(PREFIX_BYTES + 3 + why.length)
      record.writeUInt16BE(code, PREFIX_BYTES)
      record.writeUInt8(why.length, PREFIX_BYTES + 2)
      record.set(why, PREFIX_BYTES + 3)
      this.output.end(record)
    }
    this.wakeSenders()
    // Our close ends the session for reading too, as a WebSocket close does: what the peer sends
    // after it is not read.
    if (!this.inputDone) {
      this.inputDone = true
      this.onClosed(code, reason)
      this.stopReading()
    }
  }

  protected pauseTransport(): void {
    this.input.pause()
  }

  protected resumeTransport(): void {
    if (!this.inputDone) this.input.resume()
  }

  private onData(chunk: Buffer): void {
    if (this.inputDone) return
    this.pending.push(chunk)
    this.pendingBytes += chunk.length
    for (;;) {
      if (this.inputDone || this.pendingBytes < PREFIX_BYTES) return
      const length = this.peek(PREFIX_BYTES).readUInt32BE(0)
      if (length === 0) {
        if (!this.readCloseRecord()) return
        continue
      }
      if (length > this.frameLimit) {
        // Refused on the prefix alone: nothing of the frame has been buffered or allocated.
        this.stats.bytesReceived += PREFIX_BYTES
        this.inputDone = true
        this.stopReading()
        const when = this.frameLimit < LIMITS.maxFrameBytes ? ' before the handshake finished' : ''
        this.fail(new DsyncError('BAD_MESSAGE', `the peer announced a ${length}-byte frame${when}; the limit is ${this.frameLimit}`), CLOSE.tooBig)
        return
      }
      if (this.pendingBytes < PREFIX_BYTES + length) return
      this.take(PREFIX_BYTES)
      this.onFrame(this.take(length))
    }
  }

  /** Reads a complete close record (false: wait for more bytes) and ends the session with it. */
  private readCloseRecord(): boolean {
    if (this.pendingBytes < PREFIX_BYTES + 3) return false
    const head = this.peek(PREFIX_BYTES + 3)
    const reasonBytes = head.readUInt8(PREFIX_BYTES + 2)
    if (this.pendingBytes < PREFIX_BYTES + 3 + reasonBytes) return false
    this.take(PREFIX_BYTES)
    const code = this.take(3).readUInt16BE(0)
    const reason = this.take(reasonBytes).toString('utf8')
    this.inputDone = true
    this.stopReading()
    this.onClosed(code, reason)
    this.wakeSenders()
    // Answer a close with ours, as WebSocket does; the peer is no longer reading.
    if (!this.output.destroyed && !this.output.writableEnded) this.output.end()
    return true
  }

  private onInputEnd(cause?: Error): void {
    if (this.inputDone) return
    this.inputDone = true
    this.closed = true
    this.wakeSenders()
    this.endExplained = this.explainEnd(cause)
    void this.endExplained.then((err) => {
      this.inbound.end(err)
      this.wakeSenders()
    })
  }

  protected override closedError(msg: Message): DsyncError | Promise<DsyncError> {
    return this.endExplained ?? super.closedError(msg)
  }

  private stopReading(): void {
    this.pending = []
    this.pendingBytes = 0
    this.pendingOffset = 0
    // Keep consuming (and dropping) input so the peer's writes do not block on a full pipe.
    this.input.removeAllListeners('data')
    this.input.resume()
  }

  /** The first `n` pending bytes without consuming them (n ≤ 7: a prefix or a close head). */
  private peek(n: number): Buffer {
    const first = this.pending[0]!
    if (first.length - this.pendingOffset >= n) return first.subarray(this.pendingOffset, this.pendingOffset + n)
    const out = Buffer.allocUnsafe(n)
    let filled = 0
    let offset = this.pendingOffset
    for (const chunk of this.pending) {
      filled += chunk.copy(out, filled, offset, Math.min(chunk.length, offset + n - filled))
      offset = 0
      if (filled === n) break
    }
    return out
  }

  /** Consumes `n` pending bytes: a view when they lie in one chunk, else one copy. */
  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0)
    const first = this.pending[0]!
    let out: Buffer
    if (first.length - this.pendingOffset >= n) {
      out = first.subarray(this.pendingOffset, this.pendingOffset + n)
      this.pendingOffset += n
    } else {
      out = Buffer.allocUnsafe(n)
      let filled = 0
      while (filled < n) {
        const chunk = this.pending[0]!
        const copied = chunk.copy(out, filled, this.pendingOffset, Math.min(chunk.length, this.pendingOffset + n - filled))
        filled += copied
        this.pendingOffset += copied
        if (this.pendingOffset === chunk.length) {
          this.pending.shift()
          this.pendingOffset = 0
        }
      }
    }
    if (this.pending.length > 0 && this.pendingOffset === this.pending[0]!.length) {
      this.pending.shift()
      this.pendingOffset = 0
    }
    this.pendingBytes -= n
    return out
  }

  private wakeSenders(): void {
    for (const w of this.waiters.splice(0)) w()
  }
}

/** End of input without a close record: the peer went away mid-session. */
async function defaultExplainEnd(cause?: Error): Promise<DsyncError> {
  return new DsyncError(
    'NETWORK',
    cause === undefined
      ? 'the connection ended without closing the session; check the peer'
      : `connection lost: ${cause.message}`,
    { cause },
  )
}
