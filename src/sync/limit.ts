import { abortError } from './session-scope.js'

/**
 * A counting semaphore: at most `n` holders at once, the others wait in arrival order. Used to
 * bound work that holds resources (open files, plans at the peer) without blocking whoever
 * schedules it. Waiting ends with the session: once `signal` aborts, waiters reject with its
 * reason instead of waiting for a slot no one will free.
 */
export class Semaphore {
  #free: number
  readonly #waiters: { go: () => void; stop: (err: unknown) => void }[] = []

  constructor(
    n: number,
    private readonly signal: AbortSignal,
  ) {
    this.#free = n
    signal.addEventListener('abort', () => {
      for (const w of this.#waiters.splice(0)) w.stop(abortError(signal))
    }, { once: true })
  }

  /** Runs `fn` once a slot is free, and frees the slot when it settles. */
  async with<T>(fn: () => Promise<T>): Promise<T> {
    if (this.signal.aborted) throw abortError(this.signal)
    if (this.#free > 0) this.#free--
    else await new Promise<void>((go, stop) => this.#waiters.push({ go, stop }))
    try {
      return await fn()
    } finally {
      const next = this.#waiters.shift()
      if (next) next.go()
      else this.#free++
    }
  }
}
