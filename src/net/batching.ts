import { DsyncError } from '../errors.js'
import { wrapChannel, type Channel } from './channel.js'
import type { Message } from './messages.js'

/** Messages gathered at most before a batch goes without waiting for the event loop's turn. */
const MAX_BATCH = 1024

/** A signature, match list or chunk list up to this size rides in a batch; larger ones go alone. */
const SMALL_PAYLOAD_BYTES = 4096

/**
 * Small control messages (PROTOCOL.md §4.8): the ones a session sends one or more of per file.
 * File data (`data`, `bundle`), file lists (compressed already), large signatures, match lists
 * and sketches go alone; so do `done` and `step`, after which a peer may close the session.
 */
function batchable(m: Message): boolean {
  switch (m.t) {
    case 'want':
    case 'wholeWant':
    case 'chunksWant':
    case 'sketchWant':
    case 'probe':
    case 'dataEnd':
    case 'result':
    case 'notice':
    case 'filesEnd':
      return true
    case 'plan':
    case 'refine':
      return (m.signature?.length ?? 0) <= SMALL_PAYLOAD_BYTES
    case 'matches':
      return m.list.length <= SMALL_PAYLOAD_BYTES
    case 'chunks':
      return m.chunks.length * 20 <= SMALL_PAYLOAD_BYTES
    default:
      return false
  }
}

/**
 * A channel that sends the small messages posted in one turn of the event loop as one `batch`
 * frame, compressed together (a version-3 peer: PROTOCOL.md §4.8), and hands each message of a
 * batch it receives on as if it had come alone. Per file a session sends a `want`, a `result`
 * and often a `plan`, `chunks` and `dataEnd`: 40–130 bytes each, alone in a frame, they were
 * ~110 bytes a file both ways on a first push of 2,000 small files (the receiver's 227 KB
 * against rsync's 38 KB); together, paths and keys compress as a file list does.
 *
 * A small message's `send` resolves once it is queued (the session's control messages are
 * bounded by its windows; past MAX_BATCH the caller waits for the batch to go); any other
 * message first sends what is queued, so the order of the calls is the order on the wire.
 * Must be the innermost wrapper (next to the transport): every other one sees single messages.
 */
export function withBatching(channel: Channel): Channel {
  let queued: Message[] = []
  let scheduled = false
  let failure: unknown
  const flush = (): Promise<void> => {
    if (queued.length === 0) return Promise.resolve()
    const msgs = queued
    queued = []
    const sent = channel.send(msgs.length === 1 ? msgs[0]! : { t: 'batch', messages: msgs })
    sent.catch((err: unknown) => {
      failure ??= err
    })
    return sent
  }
  const failed = (): Promise<void> =>
    Promise.reject(failure instanceof Error ? failure : new DsyncError('NETWORK', 'connection closed; cannot send'))
  const wrapped = wrapChannel(channel, {
    send(msg) {
      if (failure !== undefined) return failed()
      if (!batchable(msg)) {
        const before = flush()
        const sent = channel.send(msg)
        return Promise.all([before, sent]).then(() => undefined)
      }
      queued.push(msg)
      if (queued.length >= MAX_BATCH) return flush()
      if (!scheduled) {
        scheduled = true
        setImmediate(() => {
          scheduled = false
          flush().catch(() => undefined) // kept in `failure`; the session sees the closed channel
        })
      }
      return Promise.resolve()
    },
    async *messages() {
      for await (const msg of channel.messages()) {
        if (msg.t === 'batch') yield* msg.messages
        else yield msg
      }
    },
  })
  return {
    ...wrapped,
    get stats() {
      return channel.stats
    },
    // What is queued goes first: its write starts now, before the close frame.
    close(code, reason) {
      flush().catch(() => undefined)
      channel.close(code, reason)
    },
  }
}
