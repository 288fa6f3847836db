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
 *
 * Buffers of POOLED_BYTES (a file source's reads) are used again once their message is on the
 * wire (recycleSent, called by a transport that no longer needs the frame). Each new 1 MiB
 * buffer is external memory to V8, and V8 answers that volume with full collections: a new
 * 1 GiB file sent whole cost the sender ~44 mark-compacts (0.6 of its 2.5 CPU s, --cpu-prof and
 * --trace-gc), one with the read buffers reused (bench/README.md, "Buffers used again").
 */
export const HEADROOM_BYTES = 32

/** The size of buffers kept for reuse: file-source.ts READ_BUFFER_BYTES, a full read. */
export const POOLED_BYTES = 1024 * 1024

/**
 * Buffers kept for reuse, at most. A sender has at most 8 files streaming, each with two reads
 * (one being read, one being sent) and the channel's 4 MiB high-water mark of frames written
 * and not yet flushed: 8 covers a single large file's stream, the case that allocates the most.
 * Memory kept: 8 MiB at most, whatever is sent.
 */
const MAX_POOLED = 8

/** Buffers made here, by where the view handed out starts; deleted when the room is used. */
const roomy = new WeakMap<ArrayBufferLike, number>()
/** Buffers whose room holds a message's header, with that message (prependInPlace): they go
 *  back to the pool once that very message was written (recycleSent). */
const inMessage = new WeakMap<ArrayBufferLike, Uint8Array>()
/** Whole buffers of HEADROOM_BYTES + POOLED_BYTES that nothing refers to any more. */
const pool: ArrayBuffer[] = []

/**
 * `n` bytes (not zeroed) with HEADROOM_BYTES of room before them, in a buffer of their own: a
 * buffer from the pool when `n` is POOLED_BYTES and one is there (its old bytes left in it), else
 * a new one.
 */
export function allocWithHeadroom(n: number): Uint8Array {
  const reused = n === POOLED_BYTES ? pool.pop() : undefined
  // allocUnsafeSlow: never from Node's shared pool, so the buffer is ours alone and starts at 0.
  const whole = reused ?? Buffer.allocUnsafeSlow(n + HEADROOM_BYTES).buffer
  const view = new Uint8Array(whole, HEADROOM_BYTES, n)
  roomy.set(whole, HEADROOM_BYTES)
  return view
}

/**
 * `prefix` then `bytes` as one view, the prefix written into the room before `bytes`, when
 * `bytes` starts where a buffer of allocWithHeadroom began (once per buffer); else undefined
 * (the caller copies).
 */
export function prependInPlace(prefix: Uint8Array, bytes: Uint8Array): Uint8Array | undefined {
  // Buffers made here start at 0: any other offset has no room (and a small message's bytes
  // are not asked for their `buffer`, which moves an on-heap array off the heap).
  if (bytes.byteOffset !== HEADROOM_BYTES) return undefined
  const start = roomy.get(bytes.buffer)
  if (start === undefined || bytes.byteOffset !== start || prefix.length > HEADROOM_BYTES) return undefined
  roomy.delete(bytes.buffer)
  const out = new Uint8Array(bytes.buffer, start - prefix.length, prefix.length + bytes.length)
  out.set(prefix, 0)
  inMessage.set(bytes.buffer, out)
  return out
}

/**
 * Says that `frame`, a message as encoded, has been written and nothing will read it again:
 * when it is a message prependInPlace made of a whole pooled read, its buffer goes back to the
 * pool. Only a transport that has copied the frame out (to the kernel, or into a buffer of its
 * own) may call this: the buffer's bytes are overwritten by the next read into it. The file
 * source never reads into a buffer it has yielded, and the delta writer and the frames keep
 * none once the message went (a buffer that went any other way is never recycled, just freed).
 */
export function recycleSent(frame: Uint8Array): void {
  if (frame.byteOffset >= HEADROOM_BYTES) return
  const buffer = frame.buffer
  // The message itself, not one like it: an old frame of a buffer since reused must not free
  // the buffer under the message it now carries.
  if (inMessage.get(buffer) !== frame) return
  inMessage.delete(buffer)
  if (buffer.byteLength === HEADROOM_BYTES + POOLED_BYTES && frame.byteLength === buffer.byteLength - frame.byteOffset && pool.length < MAX_POOLED) {
    pool.push(buffer as ArrayBuffer)
  }
}

/** Buffers waiting in the pool (tests). */
export function pooledCount(): number {
  return pool.length
}
