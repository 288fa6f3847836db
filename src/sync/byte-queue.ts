import { DsyncError } from '../errors.js'

/**
 * A bounded queue of byte buffers between the message pump (producer) and one file's writer
 * (consumer, via async iteration). `push` waits while more than `highWaterBytes` are queued, so
 * a slow disk slows the pump, which stops reading the socket: backpressure reaches the sender.
 */
export class ByteQueue implements AsyncIterable<Uint8Array> {
  readonly #items: Uint8Array[] = []
  #bytes = 0
  #ended = false
  #failure: DsyncError | undefined
  #wakeConsumer: (() => void) | undefined
  #wakeProducer: (() => void) | undefined

  constructor(private readonly highWaterBytes = 8 * 1024 * 1024) {}

  async push(bytes: Uint8Array): Promise<void> {
    while (this.#bytes > this.highWaterBytes && this.#failure === undefined) {
      await new Promise<void>((r) => (this.#wakeProducer = r))
    }
    if (this.#ended || this.#failure) return // the consumer gave up: drop, it will report why
    this.#items.push(bytes)
    this.#bytes += bytes.length
    this.#wakeConsumer?.()
  }

  end(): void {
    this.#ended = true
    this.#wakeConsumer?.()
  }

  /** Ends the stream with an error the consumer will see (e.g. the connection dropped). */
  fail(err: DsyncError): void {
    this.#failure = err
    this.#wakeConsumer?.()
    this.#wakeProducer?.()
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const item = this.#items.shift()
        if (item !== undefined) {
          this.#bytes -= item.length
          if (this.#bytes <= this.highWaterBytes) this.#wakeProducer?.()
          yield item
          continue
        }
        if (this.#failure) throw this.#failure
        if (this.#ended) return
        await new Promise<void>((r) => (this.#wakeConsumer = r))
      }
    } finally {
      // Consumer stopped (done or failed): never leave the producer waiting.
      this.#failure ??= new DsyncError('ABORTED', 'file writer stopped')
      this.#items.length = 0
      this.#bytes = 0
      this.#wakeProducer?.()
    }
  }
}
