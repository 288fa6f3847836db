import { DsyncError } from '../errors.js'
import { FileDigester, streamCheckerOrNone } from '../hash/index.js'
import { DeltaWriter } from './delta-writer.js'
import { Matcher, windowFor } from './matcher.js'
import type { Signature } from './signature.js'
import { isFastCheck, type TargetCheck } from './target-check.js'

/** What encoding a delta did, in bytes. */
export interface DeltaStats {
  readonly targetSize: number
  /** Target bytes sent as COPY of the seed. */
  readonly copiedBytes: number
  /** Target bytes sent as literals (before compression). */
  readonly literalBytes: number
  /** Bytes of the delta produced (what goes on the wire). */
  readonly encodedBytes: number
}

/**
 * Streams the delta of `target` against the seed described by `sig`, in one pass over the
 * target and memory bounded by max(4 MiB, 4 blocks) plus one literal frame.
 *
 * Matching, per position p of the target:
 * - continuing a run: after block k matched, the next bytes are compared with block k+1 alone
 *   (a weak and a strong key over one block, no search) — the common case of a similar file;
 * - searching: otherwise a window of blockSize bytes rolls one byte at a time, a bitmap and a
 *   map find the blocks with its weak key; a block found so is accepted only if the block after
 *   it matches too (see keyBits for why that lets each block carry fewer bits), except the one
 *   block the run predicts one block after a failed continuation (k+2 at the end of block k's
 *   copy + b: block k+1 was overwritten), which is accepted on its own keys, as a continuation
 *   is;
 * - at the target's end, its last bytes are compared with the seed's last block, which may be
 *   short.
 * The bytes `bytes` yields are the delta format (protocol/DELTA.md); stats() is valid once the
 * stream has ended.
 */
export function encodeDelta(
  sig: Signature,
  target: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: {
    signal?: AbortSignal
    /** The target's check (its SHA-256, or its XXH3-128: then delta format version 2) when the
     *  caller just computed it over the same file: not computed again (the receiver's check of
     *  the trailer says if the file changed in between). */
    digest?: TargetCheck
    /** zstd level of the literal frames (default DEFAULT_LEVEL, src/compress/codec.ts) */
    level?: number
    /** the target's buffers are never written again once yielded (openFileSource `fresh`):
     *  literals of them are not copied */
    ownedInput?: boolean
    /** the target's expected size (sizes the matcher's window; any size still works) */
    sizeHint?: number
    /** check the target with XXH3-128, not SHA-256 (delta format version 2), when no `digest`
     *  is given and WebAssembly runs here: for a file sent whole whose SHA-256 no one needs yet
     *  (PROTOCOL.md §4.11) */
    fastCheck?: boolean
  } = {},
): { readonly bytes: AsyncIterable<Uint8Array>; stats(): DeltaStats } {
  let result: DeltaStats | undefined
  async function* run(): AsyncGenerator<Uint8Array> {
    // The trailer's check: the given digest, else the target's XXH3-128 (fastCheck, where it
    // loads) or SHA-256, computed as the bytes go by.
    const checker = opts.fastCheck === true && opts.digest === undefined ? await streamCheckerOrNone() : undefined
    // No more literal bytes than the target holds: a small file's writer is made small.
    const writer = new DeltaWriter(sig.seedSize, {
      level: opts.level,
      fastCheck: checker !== undefined || (opts.digest !== undefined && isFastCheck(opts.digest)),
      ...(opts.sizeHint !== undefined && { literalHint: opts.sizeHint }),
    })
    const hasher = checker ?? (opts.digest === undefined ? new FileDigester() : undefined)
    const matcher = new Matcher(sig, writer, windowFor(opts.sizeHint))
    let size = 0
    try {
      for await (const input of target) {
        if (opts.signal?.aborted) throw new DsyncError('ABORTED', 'delta cancelled', { cause: opts.signal.reason })
        hasher?.update(input)
        size += input.length
        matcher.push(input, opts.ownedInput === true)
        yield* writer.take()
      }
      if (opts.signal?.aborted) throw new DsyncError('ABORTED', 'delta cancelled', { cause: opts.signal.reason })
      matcher.end()
    } finally {
      matcher.release()
    }
    writer.finish(size, hasher?.digest() ?? opts.digest!)
    yield* writer.take()
    result = Object.freeze({ targetSize: size, copiedBytes: writer.copiedBytes, literalBytes: writer.literalBytes, encodedBytes: writer.encodedBytes })
  }
  return {
    bytes: run(),
    stats(): DeltaStats {
      if (result === undefined) throw new DsyncError('INTERNAL', 'delta stats asked for before the delta stream ended')
      return result
    },
  }
}
