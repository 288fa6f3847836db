import { DsyncError } from '../errors.js'
import { FileDigester, type FileDigest } from '../hash/index.js'
import type { SeedReader } from './apply-delta.js'
import { DeltaWriter } from './delta-writer.js'
import type { DeltaStats } from './encode-delta.js'
import { holesOf, MatchRecorder, type MatchList } from './match-list.js'
import { Matcher, windowFor } from './matcher.js'
import { holeSignature, type RefineSignature } from './refine-signature.js'
import type { Signature } from './signature.js'

/** Target bytes are read in pieces of at most this size in refinement rounds and the final delta. */
const READ_PIECE = 1024 * 1024

const aborted = (signal: AbortSignal | undefined, what: string): void => {
  if (signal?.aborted) throw new DsyncError('ABORTED', `${what} cancelled`, { cause: signal.reason })
}

/**
 * Round 1 of a refined delta: matches `target` (streamed once) against the seed's signature
 * with encodeDelta's rules, and keeps only the copies. Also returns the target's size and
 * SHA-256, which the final delta carries (the sender reads only the holes again); `digest`:
 * the SHA-256 the caller just computed over the same file, not computed again (as encodeDelta's).
 */
export async function matchTarget(sig: Signature, target: AsyncIterable<Uint8Array>, opts: { signal?: AbortSignal; digest?: FileDigest; sizeHint?: number } = {}): Promise<{ list: MatchList; digest: FileDigest }> {
  const rec = new MatchRecorder()
  const matcher = new Matcher(sig, rec, windowFor(opts.sizeHint))
  const digester = opts.digest === undefined ? new FileDigester() : undefined
  let size = 0
  for await (const input of target) {
    aborted(opts.signal, 'matching')
    digester?.update(input)
    size += input.length
    matcher.push(input)
  }
  matcher.end()
  return { list: { seedSize: sig.seedSize, targetSize: size, matches: rec.matches }, digest: digester?.digest() ?? opts.digest! }
}

/**
 * A refinement round on the sender: each refined hole is read from `target` and matched against
 * its own seed range's small blocks (continuing from the range's start, then searching, as
 * encodeDelta does); the copies found join the list's. Holes not refined stay as they are.
 */
export async function refineMatches(list: MatchList, sig: RefineSignature, target: SeedReader, opts: { signal?: AbortSignal } = {}): Promise<MatchList> {
  if (target.size !== list.targetSize) throw new DsyncError('SOURCE_CHANGED', `the file is ${target.size} bytes now, ${list.targetSize} when it was matched: it changed while being sent`)
  const holes = holesOf(list)
  const refined = new Map<number, number>() // hole index → first key
  let first = 0
  for (const i of sig.holes) {
    refined.set(i, first)
    first += Math.ceil(holes[i]!.seedLength / sig.blockSize)
  }
  const out = new MatchRecorder()
  let m = 0
  for (const [i, h] of holes.entries()) {
    for (; m < list.matches.length && list.matches[m]!.target < h.target; m++) out.add(list.matches[m]!.target, list.matches[m]!.seed, list.matches[m]!.length)
    const k = refined.get(i)
    if (k === undefined) continue
    aborted(opts.signal, 'refinement')
    const found = new MatchRecorder()
    const matcher = new Matcher(holeSignature(sig, h.seedLength, k), found, windowFor(h.length))
    for (let at = 0; at < h.length; at += READ_PIECE) matcher.push(await target.read(h.target + at, Math.min(READ_PIECE, h.length - at)))
    matcher.end()
    for (const f of found.matches) out.add(h.target + f.target, h.seed + f.seed, f.length)
  }
  for (; m < list.matches.length; m++) out.add(list.matches[m]!.target, list.matches[m]!.seed, list.matches[m]!.length)
  return { seedSize: list.seedSize, targetSize: list.targetSize, matches: out.matches }
}

/**
 * The final delta of a refined exchange, in the ordinary delta format (protocol/DELTA.md): the
 * list's matches as COPY, its holes as literals read from `target`, and `digest` (round 1's) in
 * the trailer. A target that changed since round 1 fails the receiver's digest check, which
 * resends it whole, as after a false match.
 */
export function encodeMatchedDelta(
  list: MatchList,
  target: SeedReader,
  digest: FileDigest,
  opts: { signal?: AbortSignal; level?: number } = {},
): { readonly bytes: AsyncIterable<Uint8Array>; stats(): DeltaStats } {
  let result: DeltaStats | undefined
  async function* run(): AsyncGenerator<Uint8Array> {
    const w = new DeltaWriter(list.seedSize, { level: opts.level })
    let pos = 0
    const literalTo = async function* (end: number): AsyncGenerator<Uint8Array> {
      for (; pos < end; ) {
        aborted(opts.signal, 'delta')
        const n = Math.min(READ_PIECE, end - pos)
        w.literal(await target.read(pos, n))
        pos += n
        yield* w.take()
      }
    }
    for (const m of list.matches) {
      yield* literalTo(m.target)
      w.copy(m.seed, m.length)
      pos += m.length
      yield* w.take()
    }
    yield* literalTo(list.targetSize)
    w.finish(list.targetSize, digest)
    yield* w.take()
    result = Object.freeze({ targetSize: list.targetSize, copiedBytes: w.copiedBytes, literalBytes: w.literalBytes, encodedBytes: w.encodedBytes })
  }
  return {
    bytes: run(),
    stats(): DeltaStats {
      if (result === undefined) throw new DsyncError('INTERNAL', 'delta stats asked for before the delta stream ended')
      return result
    },
  }
}
