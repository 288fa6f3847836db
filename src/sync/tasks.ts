import type { Channel, Message } from '../net/index.js'

/**
 * Background tasks of one session (file writers, signature builders). The first failure is kept
 * and rethrown by `settled()`; per-file failures are expected to be caught inside the task and
 * reported, so a failure here is fatal for the session.
 */
export class TaskGroup {
  readonly #running = new Set<Promise<void>>()
  #error: { err: unknown } | undefined

  /** @param onFailure called once, at the first failure: e.g. to close the connection, so a
   *  message loop waiting for the peer wakes up instead of waiting forever. */
  constructor(private readonly onFailure: (err: unknown) => void = () => undefined) {}

  spawn(task: () => Promise<void>, onSettled?: () => void): void {
    const p: Promise<void> = task()
      .catch((err: unknown) => {
        if (this.#error === undefined) {
          this.#error = { err }
          this.onFailure(err)
        }
      })
      .finally(() => {
        this.#running.delete(p)
        onSettled?.()
      })
    this.#running.add(p)
  }

  get size(): number {
    return this.#running.size
  }

  /** The first failure so far, if any. */
  get failure(): unknown {
    return this.#error?.err
  }

  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running])
    if (this.#error) throw this.#error.err
  }
}

/**
 * Sends control messages in order without making the caller wait for the socket. A message
 * pump must never block on a send: if both sides' pumps waited on sends while neither read,
 * they would deadlock once both socket buffers filled. Control messages are small metadata,
 * so queueing them is bounded by the file list.
 */
export class SendChain {
  #tail: Promise<void> = Promise.resolve()
  #error: { err: unknown } | undefined

  constructor(private readonly channel: Channel) {}

  post(msg: Message): void {
    this.#tail = this.#tail
      .then(() => (this.#error ? undefined : this.channel.send(msg)))
      .catch((err: unknown) => {
        this.#error ??= { err }
      })
  }

  async flushed(): Promise<void> {
    await this.#tail
    if (this.#error) throw this.#error.err
  }
}
