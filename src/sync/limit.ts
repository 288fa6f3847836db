/**
 * Runs async tasks with at most `n` in flight (like ws lib/limiter.js). `run` resolves when the
 * task has STARTED, so a producer awaiting it is slowed to the pace of the workers:
 * backpressure by construction. `idle()` resolves when every task has settled; the first task
 * failure is rethrown there.
 */
export class Limiter {
  #active = 0
  #waiters: (() => void)[] = []
  #all = new Set<Promise<void>>()
  #error: unknown = undefined
  #failed = false

  constructor(private readonly n: number) {}

  async run(task: () => Promise<void>): Promise<void> {
    while (this.#active >= this.n) await new Promise<void>((r) => this.#waiters.push(r))
    this.#active++
    const p = task()
      .catch((err: unknown) => {
        if (!this.#failed) {
          this.#failed = true
          this.#error = err
        }
      })
      .finally(() => {
        this.#active--
        this.#all.delete(p)
        this.#waiters.shift()?.()
      })
    this.#all.add(p)
  }

  async idle(): Promise<void> {
    while (this.#all.size > 0) await Promise.all([...this.#all])
    if (this.#failed) throw this.#error
  }
}
