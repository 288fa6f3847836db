import type { Channel, Message } from '../net/index.js'

/**
 * Sends control messages in order without making the caller wait for the socket. A message
 * pump must never block on a send: if both sides' pumps waited on sends while neither read,
 * they would deadlock once both socket buffers filled. Control messages are small metadata;
 * the receiver bounds what it posts (a window of wanted files), the sender answers only what
 * was asked.
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
