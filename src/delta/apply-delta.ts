import { decompressFrame } from '../compress/index.js'
import { DsyncError, ensureData } from '../errors.js'
import { STREAM_CHECK_BYTES, type FileDigest } from '../hash/index.js'
import { DELTA_MAGIC, DELTA_VERSION, DELTA_VERSION_FAST_CHECK, DIGEST_BYTES, MAX_FRAME_RAW, MAX_FRAME_STORED, OP } from './delta-format.js'
import { unzigzag } from './bytes.js'
import { StreamReader } from './stream-reader.js'
import { isFastCheck, sameCheck, targetHasher, type TargetCheck } from './target-check.js'

/** Random access to the seed a delta was made against. */
export interface SeedReader {
  /** Bytes in the seed. */
  readonly size: number
  /** Exactly `length` bytes from `offset` (the caller keeps within `size`). The result may be
   *  reused by the call after next (applyDelta reads one piece ahead). Reads may be in flight
   *  together (readRanges) unless the reader reuses its buffers (openSeedReader's `reuse`). */
  read(offset: number, length: number): Promise<Uint8Array>
}

/** Where a rebuilt target goes. `bytes` is valid only until the returned promise settles. */
export interface ByteSink {
  write(bytes: Uint8Array): Promise<void>
}

/** Seed bytes are read, and target bytes written, in pieces of at most this size. */
const IO_PIECE = 1024 * 1024

/** Gathers small writes into one buffer: a delta of many short ops would otherwise cost one
 *  write call each. */
class BufferedSink {
  /** Grows up to IO_PIECE: most files are small, and a 1 MiB buffer each cost more than the
   *  file's own bytes (allocation and GC, --cpu-prof of a 2,000-file push). Starts at 16 KiB,
   *  or the size the file is expected to have when smaller (zeroed 16 KiB for each file of
   *  ~1.8 KiB, on a first push of 20,000: the sender's like buffers cost it a fifth of its CPU). */
  #buf: Uint8Array
  #len = 0
  size = 0
  /** `digester`: the target's SHA-256 (format version 1) or XXH3-128 (version 2), as written */
  constructor(
    readonly sink: ByteSink,
    private readonly maxSize: number,
    readonly digester: { update(bytes: Uint8Array): void; digest(): TargetCheck },
  ) {
    this.#buf = new Uint8Array(Math.min(16 * 1024, maxSize))
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.size += bytes.length
    if (this.size > this.maxSize) {
      throw new DsyncError('SOURCE_CHANGED', `the delta rebuilds more than the ${this.maxSize} bytes the file was listed with: it changed while being sent`)
    }
    if (bytes.length >= IO_PIECE / 2) {
      await this.flush()
      // The write runs on libuv's thread pool while the digest runs here: in turn (~0.7 ms a
      // MiB each), a new 1 GiB file's receiver spent a third of its time waiting on one or the
      // other. `bytes` is not touched until both are done.
      const written = this.sink.write(bytes)
      this.digester.update(bytes)
      await written
      return
    }
    this.digester.update(bytes)
    if (this.#len + bytes.length > this.#buf.length) {
      // Grow while the result fits in IO_PIECE; else flush first. bytes < IO_PIECE / 2 here, so
      // after a flush it always fits a buffer grown to at least its length. (Growing alone
      // overflowed on writes of 300,000 + 300,000 + 450,000 bytes: issue 7, item 2.)
      if (this.#len + bytes.length > IO_PIECE) await this.flush()
      if (this.#len + bytes.length > this.#buf.length) {
        const bigger = new Uint8Array(Math.min(IO_PIECE, Math.max(2 * this.#buf.length, this.#len + bytes.length)))
        bigger.set(this.#buf.subarray(0, this.#len))
        this.#buf = bigger
      }
    }
    this.#buf.set(bytes, this.#len)
    this.#len += bytes.length
  }

  async flush(): Promise<void> {
    if (this.#len === 0) return
    const n = this.#len
    this.#len = 0
    await this.sink.write(this.#buf.subarray(0, n))
  }
}

/**
 * Applies a delta (streamed, any buffer split) to `seed` (null for a delta made against
 * EMPTY_SIGNATURE or an empty seed), writing the target to `sink`. Memory: one decoded literal
 * frame (≤ 4 MiB) and 1 MiB of I/O buffer, whatever the sizes.
 *
 * Checks everything: magic and version, the seed's size against the one the delta was made for,
 * every record against the format's limits, the target's size and SHA-256 (XXH3-128 in format
 * version 2) against the trailer, and that nothing follows it. Throws DsyncError BAD_DATA (truncated, corrupted, wrong seed,
 * trailing bytes), DIGEST_MISMATCH (the rebuilt target is not the one the delta describes) or
 * SOURCE_CHANGED (not the `expect`ed target); the sink may then have received part of a wrong
 * target, so write into a temp file (patchFile).
 * Returns the target's size and digest (undefined for format version 2, which carries none), and
 * how many of its bytes came from the seed (copied) and from the delta (literal): the receiver's
 * side of the sender's DeltaStats.
 */
export async function applyDelta(
  seed: SeedReader | null,
  delta: AsyncIterable<Uint8Array>,
  sink: ByteSink,
  opts: {
    signal?: AbortSignal
    expect?: ExpectedTarget
    /** the delta's buffers are never reused once yielded (a session's messages): a stored
     *  frame is then used where it lies, not copied */
    ownedInput?: boolean
  } = {},
): Promise<AppliedDelta> {
  const r = new StreamReader(delta)
  try {
    const got = await applyFrom(r, seed, sink, opts.signal, opts.expect, opts.ownedInput === true)
    if (opts.expect !== undefined && (got.size !== opts.expect.size || (opts.expect.digest !== undefined && got.digest !== opts.expect.digest))) {
      throw new DsyncError('SOURCE_CHANGED', `the file sent is not the one listed (${got.size} bytes, listed ${opts.expect.size}): it changed while being sent`)
    }
    return got
  } finally {
    await r.close()
  }
}

/** What applyDelta rebuilt. */
export interface AppliedDelta {
  readonly size: number
  /** its SHA-256; undefined when the delta checked it with XXH3-128 (format version 2) */
  readonly digest: FileDigest | undefined
  readonly copiedBytes: number
  readonly literalBytes: number
}

/** What the rebuilt target must be, when the caller knows it beforehand (sync: the chunk list's
 *  size and digest). A delta of another target — the sender's file changed while it was read —
 *  is refused with SOURCE_CHANGED, as soon as it grows past `size`, or at its end. */
export interface ExpectedTarget {
  readonly size: number
  /** unknown for a file asked for whole, which came with no list: its size alone bounds it */
  readonly digest?: FileDigest
}

async function applyFrom(r: StreamReader, seed: SeedReader | null, sink: ByteSink, signal: AbortSignal | undefined, expect: ExpectedTarget | undefined, owned: boolean): Promise<AppliedDelta> {
  for (const m of DELTA_MAGIC) {
    if ((await r.u8()) !== m) throw new DsyncError('BAD_DATA', 'not a dsync delta (bad magic bytes)')
  }
  const version = await r.u8()
  if (version !== DELTA_VERSION && version !== DELTA_VERSION_FAST_CHECK) {
    throw new DsyncError('BAD_DATA', `delta format version ${version} is not supported (this dsync reads versions ${DELTA_VERSION} and ${DELTA_VERSION_FAST_CHECK}); make it again with this dsync`)
  }
  const fast = version === DELTA_VERSION_FAST_CHECK
  // A target whose SHA-256 is known must be checked against it: a check of another kind would
  // let a sender pass off other bytes as the listed file.
  if (fast && expect?.digest !== undefined) {
    throw new DsyncError('BAD_DATA', 'delta checked with XXH3-128 for a file whose SHA-256 was listed: the sender must check it with that SHA-256')
  }
  const seedSize = await r.varint('seed size')
  if (seedSize > 0) {
    if (seed === null) throw new DsyncError('BAD_DATA', `delta was made against a seed of ${seedSize} bytes, and no seed was given`)
    if (seed.size !== seedSize) {
      throw new DsyncError('BAD_DATA', `wrong seed: the delta was made against a seed of ${seedSize} bytes, this one has ${seed.size}`)
    }
  }
  const out = new BufferedSink(sink, expect?.size ?? Number.MAX_SAFE_INTEGER, await targetHasher(fast))
  let frame: Uint8Array = new Uint8Array(0)
  let framePos = 0
  let prevCopyEnd = 0
  let copiedBytes = 0
  for (;;) {
    if (signal?.aborted) throw new DsyncError('ABORTED', 'patch cancelled', { cause: signal.reason })
    const at = r.offset
    const op = await r.u8()
    if (op === OP.COPY) {
      const offset = prevCopyEnd + unzigzag(await r.varint('copy offset'))
      const length = await r.varint('copy length')
      ensureData(seed !== null && length > 0 && offset >= 0 && offset + length <= seedSize, `delta: copy of seed bytes ${offset}..${offset + length} is outside the seed (${seedSize} bytes), at byte ${at}`)
      // The next piece is read while this one is written and hashed: the reads and the writes
      // are both on libuv's thread pool, and in turn a 1 GiB copy spent ~0.1–0.2 s more
      // (by hand, 1 MiB pieces with the digest: 1.16–1.21 s read ahead, 1.26–1.46 s in turn).
      // Each read is marked handled when it starts: one that fails while a write is awaited
      // is that loop's error at its `await`, not an unhandled rejection (which ends the process).
      const readAhead = (at: number, n: number): Promise<Uint8Array> => {
        const p = seed.read(at, n)
        p.catch(() => undefined)
        return p
      }
      let next: Promise<Uint8Array> | undefined = readAhead(offset, Math.min(IO_PIECE, length))
      for (let done = 0; done < length; ) {
        const bytes: Uint8Array = await next!
        const n = bytes.length
        next = done + n < length ? readAhead(offset + done + n, Math.min(IO_PIECE, length - done - n)) : undefined
        await out.write(bytes)
        done += n
      }
      prevCopyEnd = offset + length
      copiedBytes += length
    } else if (op === OP.LIT) {
      const length = await r.varint('literal length')
      ensureData(length > 0 && length <= frame.length - framePos, `delta: literal of ${length} bytes overruns its frame, at byte ${at}`)
      await out.write(frame.subarray(framePos, framePos + length))
      framePos += length
    } else if (op === OP.FRAME) {
      ensureData(framePos === frame.length, `delta: new literal frame before the last one was used up, at byte ${at}`)
      const codec = await r.u8()
      const raw = await r.varint('frame size')
      const stored = await r.varint('frame stored size')
      ensureData(raw > 0 && raw <= MAX_FRAME_RAW && stored <= MAX_FRAME_STORED, `delta: literal frame of ${raw} (${stored} stored) bytes exceeds the format's limits, at byte ${at}`)
      const data = await r.bytes(stored)
      const decoded = decompressFrame(codec, data, raw)
      // A stored frame is a view of the input, which the source may reuse: keep a copy (but
      // of a session's messages, never reused: 1 GiB of copies for a new 1 GiB file).
      frame = decoded === data && !owned ? data.slice() : decoded
      framePos = 0
    } else if (op === OP.END) {
      ensureData(framePos === frame.length, `delta: ends with ${frame.length - framePos} literal bytes unused`)
      const size = await r.varint('target size')
      const trailer = Buffer.from(await r.bytes(fast ? STREAM_CHECK_BYTES : DIGEST_BYTES))
      ensureData(await r.atEnd(), 'delta: unexpected bytes after its end')
      await out.flush()
      if (size !== out.size) {
        throw new DsyncError('BAD_DATA', `delta is corrupted: it rebuilt ${out.size} bytes, its trailer says ${size}`)
      }
      const got = out.digester.digest()
      if (!sameCheck(got, fast ? trailer : (trailer.toString('hex') as FileDigest))) {
        const what = fast ? 'XXH3-128' : 'SHA-256'
        throw new DsyncError('DIGEST_MISMATCH', `the rebuilt file does not match the ${what} the delta carries (wrong seed, or a corrupted delta or seed)`)
      }
      return { size, digest: isFastCheck(got) ? undefined : got, copiedBytes, literalBytes: size - copiedBytes }
    } else {
      throw new DsyncError('BAD_DATA', `delta is corrupted: unknown record type 0x${op.toString(16)} at byte ${at}`)
    }
  }
}
