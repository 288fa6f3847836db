// The caps and their defaults live in the leaf src/choices.ts: `dsync serve --help` shows
// them without loading this layer.
import type { ServerLimits } from '../choices.js'
export { type ServerLimits, DEFAULT_SERVER_LIMITS } from '../choices.js'

/** A held slot; `release` may be called any number of times. */
export interface Slot {
  release(): void
}

/**
 * Counts pending connections (in total and per address) and sessions, and admits or refuses
 * each new one. Refusals are logged once per burst (`BurstLog`), so a flood cannot flood the log.
 */
export class Admission {
  private pending = 0
  private readonly pendingByAddress = new Map<string, number>()
  private sessions = 0
  private readonly connectionRefusals: BurstLog
  private readonly sessionRefusals: BurstLog

  constructor(
    private readonly limits: ServerLimits,
    log: (line: string) => void,
  ) {
    this.connectionRefusals = new BurstLog(log, 'connections')
    this.sessionRefusals = new BurstLog(log, 'sessions')
  }

  get pendingHandshakes(): number {
    return this.pending
  }

  get activeSessions(): number {
    return this.sessions
  }

  /** A slot for a new unauthenticated connection from `address`, or why it is refused. */
  admitConnection(address: string): Slot | string {
    const fromAddress = this.pendingByAddress.get(address) ?? 0
    const refusal = this.pending >= this.limits.maxPendingHandshakes
      ? `${this.pending} connections are waiting to authenticate, the most this server allows; try again in a few seconds`
      : fromAddress >= this.limits.maxPendingPerAddress
        ? `${fromAddress} connections from ${address} are waiting to authenticate, the most allowed from one address; try again in a few seconds`
        : null
    if (refusal !== null) {
      this.connectionRefusals.note(refusal)
      return refusal
    }
    this.pending++
    this.pendingByAddress.set(address, fromAddress + 1)
    return once(() => {
      this.pending--
      const left = (this.pendingByAddress.get(address) ?? 1) - 1
      if (left === 0) this.pendingByAddress.delete(address)
      else this.pendingByAddress.set(address, left)
    })
  }

  /** A slot for a newly authenticated session, or why it is refused. */
  admitSession(): Slot | string {
    if (this.sessions >= this.limits.maxSessions) {
      const refusal = `the server is busy: ${this.sessions} sessions are open, the most it allows; try again later`
      this.sessionRefusals.note(refusal)
      return refusal
    }
    this.sessions++
    return once(() => this.sessions--)
  }

  /** Stops the log timers (the server is closing). */
  stop(): void {
    this.connectionRefusals.stop()
    this.sessionRefusals.stop()
  }
}

function once(fn: () => void): Slot {
  let done = false
  return {
    release() {
      if (done) return
      done = true
      fn()
    },
  }
}

/** How long one burst of refusals is summed up before its count is logged. */
const BURST_WINDOW_MS = 10_000

/**
 * Logs the first refusal of a burst with its reason, then one line per 10 s window with how many
 * more were refused; a window with none ends the burst. A 2,000-connection flood: 2 lines.
 */
class BurstLog {
  private more = 0
  private timer: NodeJS.Timeout | null = null

  constructor(
    private readonly log: (line: string) => void,
    private readonly what: string,
  ) {}

  note(reason: string): void {
    if (this.timer !== null) {
      this.more++
      return
    }
    this.log(`refusing ${this.what}: ${reason} (further refusals are counted, not logged)`)
    this.startWindow()
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    if (this.more > 0) this.flush()
  }

  private startWindow(): void {
    this.timer = setTimeout(() => {
      this.timer = null
      if (this.more === 0) return
      this.flush()
      this.startWindow()
    }, BURST_WINDOW_MS)
    this.timer.unref()
  }

  private flush(): void {
    this.log(`refused ${this.more} more ${this.what} over the cap in the last ${BURST_WINDOW_MS / 1000} s or less`)
    this.more = 0
  }
}
