import { setMaxListeners } from 'node:events'
import { DsyncError, isDsyncError } from '../errors.js'

/** Listeners a session's signal may have at once without Node warning of a leak: up to two per
 *  file of the receiver's want window (64 files; one asked for whole has its queue from its want
 *  on, and waits for one of the 16 fetch slots), and the writers' own, with room to spare. */
const SESSION_MAX_LISTENERS = 256

/**
 * The lifetime of one session, as one structure: an AbortSignal that every file task, read,
 * write, queue and wait of the session takes, and the set of background tasks (file writers,
 * signature builders) that run under it. The first failure — a task's, the message loop's, the
 * parent's abort (Ctrl+C, server shutdown) — aborts the signal, so everything still running
 * stops, and `settled()` returns once all tasks have (each removes its temp file on the way).
 * Nothing of a session can outlive it: this is what keeps a dropped peer from holding a tree.
 *
 * Per-file failures are expected to be caught inside a task and reported; a task that throws
 * fails the whole session.
 */
export class SessionScope {
  readonly #ac = new AbortController()
  /** Aborted at the session's first failure, or when the parent signal aborts. */
  readonly signal: AbortSignal
  readonly #running = new Set<Promise<void>>()
  #error: { err: unknown } | undefined

  /**
   * @param parent the flow's signal (Ctrl+C on the client, shutdown on the server)
   * @param onFailure called once, at the first failure or abort: e.g. to close the connection,
   *   so the peer and a message loop waiting on it wake up instead of waiting forever.
   */
  constructor(
    parent: AbortSignal,
    private readonly onFailure: (err: unknown) => void = () => undefined,
  ) {
    this.signal = AbortSignal.any([parent, this.#ac.signal])
    // Each file in flight listens to the signal (its queue, its semaphore wait) and stops when
    // the file is done: the count is bounded by the session's windows (64 files wanted, 16
    // fetched at once), not by its files. Node's default warning threshold, 10, would cry leak
    // at 11.
    setMaxListeners(SESSION_MAX_LISTENERS, this.signal)
    this.signal.addEventListener('abort', () => this.abort(abortError(this.signal)), { once: true })
  }

  /** Ends the session for `err` (the first one counts): aborts the signal, calls onFailure. */
  abort(err: unknown): void {
    if (this.#error !== undefined) return
    this.#error = { err }
    this.#ac.abort(isDsyncError(err) ? err : abortError(this.signal))
    this.onFailure(err)
  }

  /** Runs `task` in the background under this session. */
  spawn(task: () => Promise<void>, onSettled?: () => void): void {
    let started: Promise<void>
    try {
      started = this.signal.aborted ? Promise.reject(abortError(this.signal)) : task()
    } catch (err) {
      // A task that throws before its first await fails the session as one that rejects does,
      // never the process.
      started = Promise.reject(err)
    }
    const p: Promise<void> = started
      .catch((err: unknown) => this.abort(err))
      .finally(() => {
        this.#running.delete(p)
        onSettled?.()
      })
    this.#running.add(p)
  }

  /** Background tasks still running. */
  get size(): number {
    return this.#running.size
  }

  /** The failure that ended the session, if any. */
  get failure(): unknown {
    return this.#error?.err
  }

  /** Waits for every task; throws the session's failure, if any. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running])
    if (this.#error) throw this.#error.err
  }
}

/** What the peer is told when a role's session fails: the DsyncError itself (BAD_MESSAGE for
 *  its bad input, …), or INTERNAL for anything else (a bug here). */
export function sessionError(err: unknown, role: string): DsyncError {
  if (isDsyncError(err)) return err
  return new DsyncError('INTERNAL', `the ${role} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
}

/** The DsyncError an aborted session's signal stands for. */
export function abortError(signal: AbortSignal): DsyncError {
  const r: unknown = signal.reason
  if (r instanceof DsyncError) return r
  return new DsyncError('ABORTED', 'the session was cancelled', { cause: r })
}
