import { isDsyncError } from '../errors.js'
import { abortError } from './byte-queue.js'

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
    const p: Promise<void> = (this.signal.aborted ? Promise.reject(abortError(this.signal)) : task())
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
