/** Caps on what a server holds for peers at once. */
export interface ServerLimits {
  /** Connections accepted and not yet authenticated (TCP accept to `welcome`), from anyone. */
  readonly maxPendingHandshakes: number
  /** The same, from one address. */
  readonly maxPendingPerAddress: number
  /** Authenticated sessions at once, running or waiting for their tree. */
  readonly maxSessions: number
}

/**
 * Defaults. A dsync client opens one connection per command and finishes its handshake in one
 * round trip, so a home and a work machine never come near these; they bound what a scanner or
 * a flood can hold (found on main: 2,000 idle connections accepted, each a socket and a timer).
 * - 64 pending: a burst of honest clients behind one server fits; a flood gets HTTP 503 at once.
 * - 8 pending per address: one host (a script in a loop, a scanner) cannot take all 64 slots
 *   and lock the owner's machines out. 8 still lets a NAT'ed office start several syncs at once.
 *   IPv6 addresses count one by one; a host holding a whole /64 can get around this cap, not
 *   around the total.
 * - 64 sessions: a running session holds up to ~12 MiB of channel buffers (8 in, 4 out), so
 *   64 is ~768 MiB at worst; sessions on one tree run one at a time, so most of them wait, small.
 */
export const DEFAULT_SERVER_LIMITS: ServerLimits = Object.freeze({
  maxPendingHandshakes: 64,
  maxPendingPerAddress: 8,
  maxSessions: 64,
})

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
