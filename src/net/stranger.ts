import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { DsyncError } from '../errors.js'
import type { Slot } from './admission.js'
import type { WsChannel } from './connection.js'

/** Answers a refused upgrade with 503 and the reason, then closes (ws `abortHandshake`). */
export function refuseUpgrade(socket: Duplex, reason: string): void {
  const body = `dsync server: ${reason}\n`
  socket.once('finish', () => socket.destroy())
  socket.end(
    `HTTP/1.1 503 ${STATUS_CODES[503]}\r\nConnection: close\r\nContent-Type: text/plain\r\nRetry-After: 5\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
}

/**
 * A connection from accept until it authenticates: its slot (or the reason it got none) and the
 * handshake deadline. A refused one gets a moment to send its request and read the 503 answer.
 */
export class Stranger {
  channel: WsChannel | null = null
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly socket: Socket,
    readonly slot: Slot | string,
    private readonly deadlineMs: number,
  ) {
    this.timer = setTimeout(() => this.expire(), typeof slot === 'string' ? Math.min(REFUSED_GRACE_MS, deadlineMs) : deadlineMs)
    socket.once('close', () => this.done())
  }

  /** The connection authenticated (or its handshake failed and it is closing): free the slot. */
  done(): void {
    clearTimeout(this.timer)
    if (typeof this.slot !== 'string') this.slot.release()
  }

  private expire(): void {
    if (this.channel === null || typeof this.slot === 'string') {
      this.socket.destroy()
      return
    }
    // fail() sends `error` and starts the close handshake; ws cuts the socket after its close
    // timeout if the peer does not answer, so the socket is gone at deadline + CLOSE_TIMEOUT_MS.
    this.channel.fail(new DsyncError('NETWORK', `handshake not finished within ${this.deadlineMs} ms; closing`))
  }
}

/** How long a refused connection may stay to send its request and read the 503. */
const REFUSED_GRACE_MS = 1000
