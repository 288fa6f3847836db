import { DsyncError, isDsyncError } from '../errors.js'
import { BATCHED_TYPES, BUNDLE_PROTOCOL_VERSION, LIMITS } from '../../protocol/messages.js'
import { wrapChannel, type Channel } from './channel.js'
import type { Message } from './messages.js'

/** Messages gathered at most before a batch goes without waiting for the event loop's turn. */
const MAX_BATCH = 1024

/** A batch goes before the next message would take it past this (an upper bound of its packed
 *  size: roughBytes), well inside LIMITS.maxBatchBytes. */
const BATCH_BYTES = LIMITS.maxBatchBytes / 2

/** A signature, match list or chunk list up to this size rides in a batch; larger ones go alone. */
const SMALL_PAYLOAD_BYTES = 4096

/**
 * Small control messages (PROTOCOL.md §4.8: BATCHED_TYPES): the ones a session sends one or
 * more of per file. File data (`data`, `bundle`), file lists (compressed already), large
 * signatures, match lists and sketches go alone; so do `done` and `step`, after which a peer
 * may close the session.
 */
function batchable(m: Message): boolean {
  if (!BATCHED_TYPES.includes(m.t)) return false
  if (m.t === 'plan' || m.t === 'refine') return (m.signature?.length ?? 0) <= SMALL_PAYLOAD_BYTES
  if (m.t === 'matches') return m.list.length <= SMALL_PAYLOAD_BYTES
  if (m.t === 'chunks') return m.chunks.length * 20 <= SMALL_PAYLOAD_BYTES
  return true
}

/** At least the bytes a message packs to (msgpack: a string's UTF-8 is ≤ 3 bytes a UTF-16 unit).
 *  Plain loops: with Object.entries and reduce it was ~18 ms of a receiver's CPU for 500 edited
 *  files (--cpu-prof). */
function roughBytes(v: unknown): number {
  if (typeof v === 'string') return 5 + 3 * v.length
  if (v instanceof Uint8Array) return 5 + v.length
  if (typeof v !== 'object' || v === null) return 9
  let n = 5
  if (Array.isArray(v)) {
    for (const x of v) n += roughBytes(x)
    return n
  }
  for (const k in v) n += 5 + 3 * k.length + roughBytes((v as Record<string, unknown>)[k])
  return n
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
  let queuedBytes = 0
  let scheduled = false
  let failure: unknown
  const flush = (): Promise<void> => {
    if (queued.length === 0) return Promise.resolve()
    const msgs = queued
    queued = []
    queuedBytes = 0
    let sent: Promise<void>
    try {
      sent = channel.send(msgs.length === 1 ? msgs[0]! : { t: 'batch', messages: msgs })
    } catch (err) {
      sent = Promise.reject(err)
    }
    // Its messages' sends have resolved: a batch that cannot go ends the session, loudly, or
    // the peer would wait for them forever.
    sent.catch((err: unknown) => {
      failure ??= err
      channel.fail(isDsyncError(err) ? err : new DsyncError('INTERNAL', `a batch could not be sent: ${String(err)}`, { cause: err }))
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
      const bytes = roughBytes(msg)
      const before = queuedBytes + bytes > BATCH_BYTES ? flush() : undefined
      queued.push(msg)
      queuedBytes += bytes
      if (queued.length >= MAX_BATCH) return flush()
      if (before !== undefined) return before
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

/** The channel a session's roles use over `channel`: batching with a peer of version 3 on, the
 *  channel itself with an older one (which would refuse a `batch`). */
export function sessionWire(channel: Channel, version: number): Channel {
  return version >= BUNDLE_PROTOCOL_VERSION ? withBatching(channel) : channel
}
