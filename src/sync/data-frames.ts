import { LIMITS } from '../net/index.js'

/** Largest `data` payload (the protocol's limit). */
const DATA_FRAME = LIMITS.maxDataBytes

/** Pieces below this are small (a delta's header, ops, a frame's header): they are joined. */
const JOIN_BELOW = 64 * 1024

/**
 * A delta's pieces as `data` payloads of at most DATA_FRAME bytes. The delta writer yields a
 * header, ops, each frame's header and body and a trailer separately, and each message costs
 * ~40 bytes and a pass through both channels:
 * - small pieces are joined (a small file went as five messages);
 * - the stream's first large piece (a frame's body) fills the message the small pieces before
 *   it began: a whole file of up to 1 MiB goes as two messages, not three, for one copy of it;
 * - any other large piece goes as it is, cut at DATA_FRAME, never copied (copying every body
 *   to fill every message cost the sender +0.1–0.3 of its ~1.8 CPU s for a new 256 MiB file,
 *   and allocated 1 MiB per message, to save 40 bytes per MiB).
 * Holds at most DATA_FRAME bytes (references to the pieces, which must not change after).
 */
export async function* dataFrames(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let held: Uint8Array[] = []
  let heldBytes = 0
  let joinedLarge = false
  const take = (): Uint8Array => {
    const out = held.length === 1 ? held[0]! : Buffer.concat(held, heldBytes)
    held = []
    heldBytes = 0
    return out
  }
  for await (const piece of pieces) {
    let o = 0
    if (piece.length >= JOIN_BELOW) {
      if (heldBytes > 0 && !joinedLarge) {
        joinedLarge = true
        o = Math.min(DATA_FRAME - heldBytes, piece.length)
        held.push(piece.subarray(0, o))
        heldBytes += o
        if (heldBytes === DATA_FRAME) yield take()
      } else if (heldBytes > 0) {
        yield take()
      }
      // Here nothing is held, or the piece ended in what is.
      while (piece.length - o >= JOIN_BELOW) {
        const n = Math.min(DATA_FRAME, piece.length - o)
        yield piece.subarray(o, o + n)
        o += n
      }
    }
    if (o === piece.length) continue
    if (heldBytes + piece.length - o > DATA_FRAME) yield take()
    held.push(o === 0 ? piece : piece.subarray(o))
    heldBytes += piece.length - o
  }
  if (heldBytes > 0) yield take()
}
