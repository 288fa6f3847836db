import { DsyncError } from '../errors.js'
import type { SeedReader } from './apply-delta.js'
import { DeltaWriter } from './delta-writer.js'
import type { DeltaStats } from './encode-delta.js'
import { holesOf, MatchRecorder, type MatchList } from './match-list.js'
import { Matcher, windowFor } from './matcher.js'
import { readRanges, type ByteRange } from './read-ranges.js'
import { holeSignature, type RefineSignature } from './refine-signature.js'
import type { Signature } from './signature.js'
import { isFastCheck, preferredHasher, type TargetCheck } from './target-check.js'

/** Target bytes are read in pieces of at most this size in refinement rounds and the final delta. */
const READ_PIECE = 1024 * 1024

const aborted = (signal: AbortSignal | undefined, what: string): void => {
  if (signal?.aborted) throw new DsyncError('ABORTED', `${what} cancelled`, { cause: signal.reason })
}

/**
 * Round 1 of a refined delta: matches `target` (streamed once) against the seed's signature
 * with encodeDelta's rules, and keeps only the copies. Also returns the target's size and
 * check, which the final delta carries (the sender reads only the holes again): `digest`, the
 * check the caller just computed over the same file, not computed again (as encodeDelta's);
 * else its XXH3-128 with `fastCheck` (where it loads), else its SHA-256.
 */
export async function matchTarget(
  sig: Signature,
  target: AsyncIterable<Uint8Array>,
  opts: { signal?: AbortSignal; digest?: TargetCheck; sizeHint?: number; fastCheck?: boolean } = {},
): Promise<{ list: MatchList; digest: TargetCheck }> {
  const rec = new MatchRecorder()
  const matcher = new Matcher(sig, rec, windowFor(opts.sizeHint))
  const digester = opts.digest !== undefined ? undefined : await preferredHasher(opts.fastCheck === true)
  let size = 0
  try {
    for await (const input of target) {
      aborted(opts.signal, 'matching')
      digester?.update(input)
      size += input.length
      matcher.push(input)
    }
    matcher.end()
  } finally {
    matcher.release()
  }
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
  const refined = sig.holes.map((i) => holes[i]!)
  // Each refined hole's keys start where the previous one's end (decodeRefineSignature).
  const firstKey: number[] = []
  for (let k = 0, first = 0; k < refined.length; first += Math.ceil(refined[k]!.seedLength / sig.blockSize), k++) firstKey.push(first)
  // The matches each refined hole finds, its bytes read ahead of the matcher (readRanges).
  const found = refined.map(() => new MatchRecorder())
  let matcher: Matcher | undefined
  try {
    for await (const p of readRanges(target, refined.map((h) => ({ offset: h.target, length: h.length })), { piece: READ_PIECE, signal: opts.signal })) {
      const h = refined[p.range]!
      matcher ??= new Matcher(holeSignature(sig, h.seedLength, firstKey[p.range]!), found[p.range]!, windowFor(h.length))
      matcher.push(p.bytes)
      if (!p.last) continue
      matcher.end()
      matcher = undefined
    }
  } finally {
    matcher?.release()
  }
  const out = new MatchRecorder()
  let m = 0
  const upTo = (target: number): void => {
    for (; m < list.matches.length && list.matches[m]!.target < target; m++) out.add(list.matches[m]!.target, list.matches[m]!.seed, list.matches[m]!.length)
  }
  for (const [k, h] of refined.entries()) {
    upTo(h.target)
    for (const f of found[k]!.matches) out.add(h.target + f.target, h.seed + f.seed, f.length)
  }
  upTo(Infinity)
  return { seedSize: list.seedSize, targetSize: list.targetSize, matches: out.matches }
}

/**
 * The final delta of a refined exchange, in the ordinary delta format (protocol/DELTA.md): the
 * list's matches as COPY, its holes as literals read from `target`, and `digest` (round 1's
 * check: a SHA-256, or an XXH3-128 in format version 2) in the trailer. A target that changed since round 1 fails the receiver's digest check, which
 * resends it whole, as after a false match.
 */
export function encodeMatchedDelta(
  list: MatchList,
  target: SeedReader,
  digest: TargetCheck,
  opts: { signal?: AbortSignal; level?: number } = {},
): { readonly bytes: AsyncIterable<Uint8Array>; stats(): DeltaStats } {
  let result: DeltaStats | undefined
  async function* run(): AsyncGenerator<Uint8Array> {
    // The literals: what lies between the matches, read ahead of the writer (readRanges).
    const gaps: ByteRange[] = []
    let pos = 0
    for (const m of list.matches) {
      gaps.push({ offset: pos, length: m.target - pos })
      pos = m.target + m.length
    }
    gaps.push({ offset: pos, length: list.targetSize - pos })
    const literalHint = gaps.reduce((n, g) => n + g.length, 0)
    const w = new DeltaWriter(list.seedSize, { level: opts.level, fastCheck: isFastCheck(digest), literalHint })
    const pieces = readRanges(target, gaps, { piece: READ_PIECE, signal: opts.signal })
    let next = await pieces.next()
    try {
      for (let g = 0; g < gaps.length; g++) {
        for (; !next.done && next.value.range === g; next = await pieces.next()) {
          aborted(opts.signal, 'delta')
          w.literal(next.value.bytes)
          yield* w.take()
        }
        const m = list.matches[g]
        if (m === undefined) continue
        w.copy(m.seed, m.length)
        yield* w.take()
      }
    } finally {
      await pieces.return(undefined)
    }
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
