/**
 * A counting semaphore: at most `n` holders at once, the others wait in arrival order. Used to
 * bound work that holds resources (open files, plans at the peer) without blocking whoever
 * schedules it.
 */
export class Semaphore {
  #free: number
  readonly #waiters: (() => void)[] = []

  constructor(n: number) {
    this.#free = n
  }

  /** Runs `fn` once a slot is free, and frees the slot when it settles. */
  async with<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--
    else await new Promise<void>((r) => this.#waiters.push(r))
    try {
      return await fn()
    } finally {
      const next = this.#waiters.shift()
      if (next) next()
      else this.#free++
    }
  }
}
