import { DsyncError } from '../errors.js'
import { abortError } from './session-scope.js'

/**
 * A bounded queue of byte buffers between the message pump (producer) and one file's writer
 * (consumer, via async iteration). `push` waits while more than `highWaterBytes` are queued, so
 * a slow disk slows the pump, which stops reading the socket: backpressure reaches the sender.
 *
 * Why not a stream.PassThrough: a writer that stops early (a bad delta, a full disk) must not
 * leave the pump waiting for a 'drain' that never comes; here `push` returns at once, dropping
 * the data, once the consumer is gone or the session's signal has aborted. The abort also ends
 * the consumer's iteration with the abort reason, so no writer outlives its session.
 */
/** What a closed queue fails with: one instance, since a session closes a queue per file and
 *  capturing a stack trace each time was 0.4 of the receiver's CPU s on 20,000 small files. The
 *  consumer that closed it never reads it; a producer only sees its pushes dropped. */
const WRITER_STOPPED = new DsyncError('ABORTED', 'file writer stopped')

/**
 * Bytes a file's queue holds before the pump waits. It was 8 MiB: 2 MiB wrote a new 1 GiB file as
 * fast, by hand, and every byte queued is memory the process holds (with the channel's inbound
 * 2 MiB, the receiver peaked ~13 MiB lower: bench/README "Speed at scale", "Garbage collection
 * under bulk data, and the queues").
 */
const QUEUE_BYTES = 2 * 1024 * 1024

export class ByteQueue implements AsyncIterable<Uint8Array> {
  readonly #items: Uint8Array[] = []
  #bytes = 0
  #ended = false
  #failure: DsyncError | undefined
  #wakeConsumer: (() => void) | undefined
  #wakeProducer: (() => void) | undefined

  readonly #unlisten: () => void

  constructor(
    signal: AbortSignal,
    private readonly highWaterBytes = QUEUE_BYTES,
  ) {
    const onAbort = (): void => this.fail(abortError(signal))
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    // A session lives through thousands of files: each queue stops listening when it is done.
    this.#unlisten = () => signal.removeEventListener('abort', onAbort)
  }

  /** The writer is done with this queue (or never started): drop what is queued, release the
   *  producer, stop listening to the session's signal. */
  close(): void {
    this.#unlisten()
    this.fail(WRITER_STOPPED)
    this.#items.length = 0
    this.#bytes = 0
  }

  /** Bytes queued and not yet taken by the consumer. */
  get queuedBytes(): number {
    return this.#bytes
  }

  async push(bytes: Uint8Array): Promise<void> {
    while (this.#bytes > this.highWaterBytes && this.#failure === undefined) {
      await new Promise<void>((r) => (this.#wakeProducer = r))
    }
    if (this.#ended || this.#failure) return // the consumer gave up: drop, it reports why
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
    this.#failure ??= err
    this.#wakeConsumer?.()
    this.#wakeProducer?.()
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        if (this.#failure) throw this.#failure
        const item = this.#items.shift()
        if (item !== undefined) {
          this.#bytes -= item.length
          if (this.#bytes <= this.highWaterBytes) this.#wakeProducer?.()
          yield item
          continue
        }
        if (this.#ended) return
        await new Promise<void>((r) => (this.#wakeConsumer = r))
      }
    } finally {
      // Consumer stopped (done or failed): never leave the producer waiting.
      this.close()
    }
  }
}
