import { CODEC, compressFrame, type CodecId } from '../compress/index.js'
import { DsyncError } from '../errors.js'
import { STREAM_CHECK_BYTES } from '../hash/index.js'
import { ByteWriter } from './bytes.js'
import { isFastCheck, type TargetCheck } from './target-check.js'
import { DELTA_MAGIC, DELTA_VERSION, DELTA_VERSION_FAST_CHECK, DIGEST_BYTES, LITERAL_FRAME_BYTES, OP } from './delta-format.js'

/** Pending op records are flushed once they pass this many bytes even if the frame is not full,
 *  so a target made of many small copies cannot grow the writer's memory. */
const MAX_PENDING_OPS_BYTES = 256 * 1024

/** First size of the literal frame buffer (it grows to LITERAL_FRAME_BYTES as needed). */
const FIRST_FRAME_BYTES = 16 * 1024
/** The op records' first buffer (it grows as needed). */
const FIRST_OPS_BYTES = 4096
/** The first size of both buffers when the caller expects few literals (`literalHint`), at least. */
const SMALL_FIRST_BYTES = 256
/** Full frames in a row stored raw (they looked random) after which frames are probed thinly
 *  (compressFrame's `thinProbe`): 4 MiB of a file's literals. */
const RANDOM_FRAMES_TO_THIN = 4
/** While thin, every this-many-th frame is probed in full all the same. */
const FULL_PROBE_EVERY = 8

/**
 * Turns a sequence of copy(seedOffset, length) and literal(bytes) calls into delta records:
 * merges adjacent copies and literal runs, gathers literals into frames of LITERAL_FRAME_BYTES
 * compressed at once, and queues the encoded pieces for the caller to take(). Memory: one frame
 * plus the pending records.
 */
export class DeltaWriter {
  /** Grows by doubling up to LITERAL_FRAME_BYTES: a 1 MiB buffer per file made syncing many
   *  small files slow (allocation and GC were ~25% of a 2,000-file push, --cpu-prof). */
  #frame: Uint8Array
  #frameLen = 0
  /** full frames stored raw in a row (RANDOM_FRAMES_TO_THIN) */
  #randomFrames = 0
  readonly #ops: ByteWriter
  #litRun = 0 // literal bytes not yet covered by a LIT record
  #copyOff = 0
  #copyLen = 0 // pending COPY, 0 when none
  #prevCopyEnd = 0
  #out: Uint8Array[] = []
  encodedBytes = 0
  literalBytes = 0
  copiedBytes = 0

  /** `level`: zstd level of the literal frames (default: the codec's, DEFAULT_LEVEL); `codec`:
   *  theirs (default: zstd, or stored where it would not shrink them); `fastCheck`: the trailer
   *  carries the target's XXH3-128, not its SHA-256 (format version 2); `literalHint`: the literal
   *  bytes the caller expects, when it knows (a refined delta's holes): a smaller first frame.
   *
   *  Each buffer made is memory touched for the first time, and a page fault costs ~12.7 µs on
   *  this VM (2026-11-27, by hand): a DeltaWriter took 26–72 µs to make in a cold process (5 µs
   *  warm), and 500 edited 20 KiB files with ~1 KiB of literals each made 500 of 20 KiB. */
  constructor(seedSize: number, private readonly opts: { readonly level?: number; readonly codec?: CodecId; readonly fastCheck?: boolean; readonly literalHint?: number } = {}) {
    const hint = opts.literalHint
    const small = hint !== undefined && hint < FIRST_FRAME_BYTES
    this.#frame = new Uint8Array(small ? Math.max(SMALL_FIRST_BYTES, hint) : FIRST_FRAME_BYTES)
    this.#ops = new ByteWriter(small ? SMALL_FIRST_BYTES : FIRST_OPS_BYTES)
    const h = new ByteWriter(16)
    writeHeader(h, seedSize, opts.fastCheck === true)
    this.#emit(h.take())
  }

  #emit(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    this.#out.push(bytes)
    this.encodedBytes += bytes.length
  }

  #endCopy(): void {
    if (this.#copyLen === 0) return
    this.#ops.u8(OP.COPY)
    this.#ops.zigzag(this.#copyOff - this.#prevCopyEnd)
    this.#ops.varint(this.#copyLen)
    this.#prevCopyEnd = this.#copyOff + this.#copyLen
    this.#copyLen = 0
  }

  #endLiteral(): void {
    if (this.#litRun === 0) return
    this.#ops.u8(OP.LIT)
    this.#ops.varint(this.#litRun)
    this.#litRun = 0
  }

  /** Emits the current frame (or `owned`, a whole frame of bytes given up by the caller, when
   *  the current one is empty), then the records that use it. */
  #flush(owned?: Uint8Array): void {
    this.#endLiteral()
    const raw = owned ?? (this.#frameLen > 0 ? this.#frame.subarray(0, this.#frameLen) : undefined)
    if (raw !== undefined) {
      // After a few frames that all looked random (a media file, an archive), the next ones are
      // probed thinly; one that does not look random brings the full probe back.
      // Every FULL_PROBE_EVERY-th frame is still probed in full: a stream misjudged once (its
      // compressible parts between the thin slices) is not misjudged to its end.
      const thin = this.#randomFrames >= RANDOM_FRAMES_TO_THIN && this.#randomFrames % FULL_PROBE_EVERY !== 0
      const f = compressFrame(raw, thin ? { ...this.opts, thinProbe: true } : this.opts)
      this.#randomFrames = f.codec === CODEC.STORED && raw.length >= LITERAL_FRAME_BYTES / 2 ? this.#randomFrames + 1 : 0
      const h = new ByteWriter(16)
      writeFrameHeader(h, f.codec, raw.length, f.data.length)
      this.#emit(h.take())
      // A stored frame of the reused frame buffer is copied out; owned bytes go as they are.
      this.#emit(f.data === raw && owned === undefined ? raw.slice() : f.data)
      if (owned === undefined) this.#frameLen = 0
    }
    this.#emit(this.#ops.take())
  }

  /** Target bytes [pos, pos+len) equal seed bytes [offset, offset+len). */
  copy(offset: number, length: number): void {
    this.copiedBytes += length
    this.#endLiteral()
    if (this.#copyLen > 0 && this.#copyOff + this.#copyLen === offset) {
      this.#copyLen += length
      return
    }
    this.#endCopy()
    this.#copyOff = offset
    this.#copyLen = length
    if (this.#ops.length > MAX_PENDING_OPS_BYTES) this.#flush()
  }

  /**
   * Target bytes that come from no seed block. Copied: `bytes` may be reused after the call;
   * unless `owned` (the caller never writes them again): whole frames of them then go out as
   * views, uncopied. A new 1 GiB file sent whole was copied twice on its way here (into the
   * frame buffer, then out of it, stored): 2 GiB of copies and 1 GiB of short-lived buffers.
   */
  literal(bytes: Uint8Array, owned = false): void {
    if (bytes.length === 0) return
    this.literalBytes += bytes.length
    this.#endCopy()
    let taken = 0
    while (taken < bytes.length) {
      if (owned && this.#frameLen === 0 && bytes.length - taken >= LITERAL_FRAME_BYTES) {
        this.#litRun += LITERAL_FRAME_BYTES
        this.#flush(bytes.subarray(taken, taken + LITERAL_FRAME_BYTES))
        taken += LITERAL_FRAME_BYTES
        continue
      }
      if (this.#frameLen === this.#frame.length && this.#frame.length < LITERAL_FRAME_BYTES) {
        const bigger = new Uint8Array(Math.min(LITERAL_FRAME_BYTES, 2 * this.#frame.length))
        bigger.set(this.#frame)
        this.#frame = bigger
      }
      const n = Math.min(bytes.length - taken, this.#frame.length - this.#frameLen)
      this.#frame.set(bytes.subarray(taken, taken + n), this.#frameLen)
      this.#frameLen += n
      this.#litRun += n
      taken += n
      if (this.#frameLen === LITERAL_FRAME_BYTES) this.#flush()
    }
  }

  /** Ends the delta: pending records, then the trailer with the target's size and check: its
   *  SHA-256, or with `fastCheck` the 16 bytes of its XXH3-128. */
  finish(targetSize: number, check: TargetCheck): void {
    const bytes = checkBytes(check, this.opts.fastCheck === true)
    this.#endCopy()
    this.#flush()
    const t = new ByteWriter(48)
    writeTrailer(t, targetSize, bytes)
    this.#emit(t.take())
  }

  /** The encoded pieces produced since the last call. */
  take(): Uint8Array[] {
    const out = this.#out
    this.#out = []
    return out
  }
}

/**
 * A file with no seed, as a delta whose literals are stored as they are: how a sender puts a
 * file in a `bundle` (whose bytes are then compressed together with the others': PROTOCOL.md
 * §4.7). `content` is not copied: the pieces view it, so the caller must not write it again.
 *
 * A file of one frame at most (every file a bundle takes: BUNDLE_FILE_BYTES) is written here
 * as three pieces, byte for byte what a DeltaWriter writes (test/delta/stored-delta.ts): the
 * writer took a 16 KiB frame buffer and 4 KiB of op records per file and copied the bytes
 * twice. On a first push of 20,000 files of ~1.8 KiB the sender's CPU fell by a fifth, its
 * garbage collection 558 → 311 ms (bench/README.md). Written into one buffer, each file was
 * still copied once more than the bundle, which joins its streams, needs.
 */
export function storedDelta(content: Uint8Array, digest: TargetCheck): Uint8Array[] {
  const fast = isFastCheck(digest)
  if (content.length > LITERAL_FRAME_BYTES) {
    const w = new DeltaWriter(0, { codec: CODEC.STORED, fastCheck: fast })
    w.literal(content, true)
    w.finish(content.length, digest)
    return w.take()
  }
  const check = checkBytes(digest, fast)
  const n = content.length
  // header (seed size 0) · FRAME stored n n · the bytes · LIT n · END n check; no frame for none
  const head = new ByteWriter(16)
  writeHeader(head, 0, fast)
  if (n === 0) {
    writeTrailer(head, n, check)
    return [head.take()]
  }
  writeFrameHeader(head, CODEC.STORED, n, n)
  const tail = new ByteWriter(16 + check.length)
  tail.u8(OP.LIT)
  tail.varint(n)
  writeTrailer(tail, n, check)
  return [head.take(), content, tail.take()]
}

// The format's fixed parts (delta-format.ts), written by DeltaWriter and storedDelta alike.

function writeHeader(w: ByteWriter, seedSize: number, fast: boolean): void {
  for (const m of DELTA_MAGIC) w.u8(m)
  w.u8(fast ? DELTA_VERSION_FAST_CHECK : DELTA_VERSION)
  w.varint(seedSize)
}

function writeFrameHeader(w: ByteWriter, codec: CodecId, rawLength: number, storedLength: number): void {
  w.u8(OP.FRAME)
  w.u8(codec)
  w.varint(rawLength)
  w.varint(storedLength)
}

function writeTrailer(w: ByteWriter, targetSize: number, check: Uint8Array): void {
  w.u8(OP.END)
  w.varint(targetSize)
  w.bytes(check)
}

/** The trailer's bytes of `check`: its SHA-256 (format version 1), or with `fast` its 16-byte
 *  XXH3-128 (version 2); INTERNAL when it is not of that length. */
function checkBytes(check: TargetCheck, fast: boolean): Uint8Array {
  const bytes = isFastCheck(check) ? check : Buffer.from(check, 'hex')
  const want = fast ? STREAM_CHECK_BYTES : DIGEST_BYTES
  if (bytes.length !== want) throw new DsyncError('INTERNAL', `delta trailer: a ${bytes.length}-byte check where the format has ${want}`)
  return bytes
}
