/**
 * Buffers with room before them for a message header: a file read to be sent whole goes out as
 * `data` messages whose payload is the read buffer itself, and the message's few header bytes
 * are written into the room before it, so the message is one view and its bytes are not copied
 * into a new buffer (net/codec.ts encodeData). That copy allocated and filled 1 MiB per MiB
 * sent: a new 1 GiB file cost the sender 0.17 s of copying and half its ~0.8 s of garbage
 * collection (1 GiB more of short-lived buffers).
 *
 * Only whoever made the buffer hands out views of it, from HEADROOM_BYTES on; the room is
 * written once, by the first prependInPlace for a view starting there, so no two messages
 * share it.
 */
export const HEADROOM_BYTES = 32

/** Buffers made here, by where the view handed out starts; deleted when the room is used. */
const roomy = new WeakMap<ArrayBufferLike, number>()

/** `n` bytes (not zeroed) with HEADROOM_BYTES of room before them, in a buffer of their own. */
export function allocWithHeadroom(n: number): Uint8Array {
  const whole = Buffer.allocUnsafeSlow(n + HEADROOM_BYTES) // never from the shared pool
  const view = new Uint8Array(whole.buffer, whole.byteOffset + HEADROOM_BYTES, n)
  roomy.set(whole.buffer, view.byteOffset)
  return view
}

/**
 * `prefix` then `bytes` as one view, the prefix written into the room before `bytes`, when
 * `bytes` starts where a buffer of allocWithHeadroom began (once per buffer); else undefined
 * (the caller copies).
 */
export function prependInPlace(prefix: Uint8Array, bytes: Uint8Array): Uint8Array | undefined {
  // allocUnsafeSlow's buffers start at 0: any other offset has no room (and a small message's
  // bytes are not asked for their `buffer`, which moves an on-heap array off the heap).
  if (bytes.byteOffset !== HEADROOM_BYTES) return undefined
  const start = roomy.get(bytes.buffer)
  if (start === undefined || bytes.byteOffset !== start || prefix.length > HEADROOM_BYTES) return undefined
  roomy.delete(bytes.buffer)
  const out = new Uint8Array(bytes.buffer, start - prefix.length, prefix.length + bytes.length)
  out.set(prefix, 0)
  return out
}
