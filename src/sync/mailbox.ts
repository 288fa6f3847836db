import { DsyncError } from '../errors.js'

/**
 * Messages for one file's task, handed over by the session's message loop in arrival order:
 * the loop `push`es, the task awaits `next`. A message that comes before the task asks is kept
 * (at most `capacity`: one answer per question; more is the peer's error, BAD_MESSAGE). The
 * session's end rejects a wait at once, also one that starts after it: an abort listener added
 * to an aborted signal never fires, and such a wait held a tree for good (a push cut just as
 * its refinement rounds began).
 */
export class Mailbox<T> {
  readonly #items: T[] = []
  #waiter: { resolve: (v: T) => void; reject: (err: unknown) => void } | undefined
  /** why no more will come (close), once closed: made when first needed */
  #closed: (() => DsyncError) | undefined

  /** @param what the message, for the error (`match list`, `sketch`, `refine`) */
  constructor(
    private readonly signal: AbortSignal,
    private readonly what: string,
    private readonly capacity = 1,
  ) {}

  push(v: T): void {
    if (this.#closed !== undefined) throw new DsyncError('BAD_MESSAGE', `${this.what} sent after the exchange it belongs to ended`)
    const w = this.#waiter
    if (w !== undefined) {
      this.#waiter = undefined
      return w.resolve(v)
    }
    if (this.#items.length >= this.capacity) throw new DsyncError('BAD_MESSAGE', `${this.what} sent before the message it answers`)
    this.#items.push(v)
  }

  /**
   * No more will come (the peer ended the file's exchange): a wait, now or later, fails with
   * the error `why` makes. Made only then: a refined exchange's mailbox is closed at every
   * file's end, mostly with nobody waiting, and an error's stack trace cost the receiver
   * ~30 µs (135 ms of CPU in a push of 4,500 files that had one).
   */
  close(why: () => DsyncError): void {
    if (this.#closed !== undefined) return
    let err: DsyncError | undefined
    this.#closed = () => (err ??= why())
    const w = this.#waiter
    this.#waiter = undefined
    w?.reject(this.#closed())
  }

  next(): Promise<T> {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift()!)
    if (this.#closed !== undefined) return Promise.reject(this.#closed())
    return new Promise<T>((resolve, reject) => {
      const stop = (): void => reject(this.signal.reason)
      if (this.signal.aborted) return stop()
      this.signal.addEventListener('abort', stop, { once: true })
      this.#waiter = {
        resolve: (v) => {
          this.signal.removeEventListener('abort', stop)
          resolve(v)
        },
        reject: (err) => {
          this.signal.removeEventListener('abort', stop)
          reject(err)
        },
      }
    })
  }
}
