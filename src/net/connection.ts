import type { RawData, WebSocket } from 'ws'
import { DsyncError } from '../errors.js'
import { recycleSent } from '../headroom.js'
import { CLOSE, DEFAULT_CHANNEL_LIMITS, FrameChannel, type ChannelLimits } from './channel.js'
import { DEFAULT_HEARTBEAT_MS, Heartbeat } from './heartbeat.js'

/**
 * How long a close handshake may take before the socket is cut, ms (ws `closeTimeout`). ws waits
 * 30 s by default, so a peer that never answers (a silent scanner, a vanished machine) held its
 * socket that long: 25–95 s after a handshake timeout on main. On a live link the answer takes
 * one round trip: a normal end closes after the last small message (`done`), once the other
 * side has read what it needed. A failed session may close behind up to 4 MiB of queued data
 * on a slow link; cutting that short loses nothing the peer could still use.
 */
export const CLOSE_TIMEOUT_MS = 1000

/** ws 8.23's `closeTimeout` option (ms), not yet in @types/ws 8.18. */
export type WithCloseTimeout<T> = T & { closeTimeout: number }

/**
 * A Channel over one WebSocket. Backpressure both ways, as ws `lib/stream.js` does it:
 * `send` resolves in the `ws.send` callback and first waits while `bufferedAmount` is above the
 * high-water mark; inbound, the socket is paused while the consumer's queue is over its limit.
 * A heartbeat (`heartbeat.ts`) drops the connection once the peer has gone silent.
 */
export class WsChannel extends FrameChannel {
  private readonly flushWaiters: (() => void)[] = []
  private heartbeat: Heartbeat | null = null

  /** `heartbeatMs`: ping interval (0: none); pinging starts once the socket is open. */
  constructor(
    private readonly ws: WebSocket,
    limits: ChannelLimits = DEFAULT_CHANNEL_LIMITS,
    heartbeatMs: number = DEFAULT_HEARTBEAT_MS,
  ) {
    super(limits)
    ws.binaryType = 'nodebuffer'
    if (heartbeatMs > 0) {
      if (ws.readyState === ws.OPEN) this.startHeartbeat(heartbeatMs)
      else ws.once('open', () => this.startHeartbeat(heartbeatMs))
    }
    ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary))
    ws.on('close', (code: number, reason: Buffer) => {
      this.onClosed(code, reason.toString('utf8'))
      this.wakeSenders()
    })
    // ws closes the socket itself after an 'error' (bad frame, oversized message); the 'close'
    // event that follows ends the session. Listening keeps the error from being unhandled.
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
        this.inbound.end(new DsyncError('BAD_MESSAGE', `the peer sent a frame over the size limit; session closed`, { cause: err }))
      } else {
        this.inbound.end(new DsyncError('NETWORK', `connection error: ${err.message}`, { cause: err }))
      }
    })
  }

  /** Bytes given to `ws.send` and not yet written to the socket (ws `bufferedAmount`). */
  get bufferedAmount(): number {
    return this.ws.bufferedAmount
  }

  protected canWrite(): boolean {
    return this.ws.bufferedAmount <= this.limits.sendHighWaterBytes
  }

  protected writableChange(): Promise<void> {
    return new Promise<void>((resolve) => this.flushWaiters.push(resolve))
  }

  protected writeFrame(frame: Uint8Array): Promise<void> {
    if (this.ws.readyState !== this.ws.OPEN) {
      return Promise.reject(new DsyncError('NETWORK', 'connection closed before the message could be sent'))
    }
    return new Promise<void>((resolve, reject) => {
      this.ws.send(frame, { binary: true }, (err) => {
        // Each flush may bring bufferedAmount under the mark: let waiting senders re-check.
        this.wakeSenders()
        if (!err) this.heartbeat?.alive()
        // Written to the socket (ws references the frame until here): its buffer may be reused.
        if (!err) recycleSent(frame)
        if (err) reject(new DsyncError('NETWORK', `connection lost while sending: ${err.message}`, { cause: err }))
        else resolve()
      })
    })
  }

  protected closeTransport(code: number, reason: string): void {
    this.ws.close(code, reason)
    this.wakeSenders()
  }

  protected pauseTransport(): void {
    this.ws.pause()
  }

  protected resumeTransport(): void {
    this.ws.resume()
  }

  private startHeartbeat(intervalMs: number): void {
    this.heartbeat = new Heartbeat(this.ws, intervalMs, () => {
      this.inbound.end(new DsyncError(
        'NETWORK',
        `the peer stopped answering: no pong and no data for over ${intervalMs / 1000} s (a dropped network or a vanished machine); connection cut`,
      ))
      this.ws.terminate()
    })
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    this.heartbeat?.alive()
    const frame = toBytes(data)
    if (!isBinary) {
      this.stats.bytesReceived += frame.length
      this.fail(new DsyncError('BAD_MESSAGE', 'text frame received; dsync speaks binary msgpack frames only'), CLOSE.unsupportedData)
      return
    }
    if (frame.length > this.frameLimit) {
      this.stats.bytesReceived += frame.length
      this.fail(new DsyncError('BAD_MESSAGE', `${frame.length}-byte frame before the handshake finished; the limit is ${this.frameLimit}`), CLOSE.tooBig)
      return
    }
    this.onFrame(frame)
  }

  private wakeSenders(): void {
    for (const w of this.flushWaiters.splice(0)) w()
  }
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data)
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  return data
}
