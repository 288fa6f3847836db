import { DsyncError, ensureData } from '../errors.js'
import type { SeedReader } from './apply-delta.js'
import { ByteWriter, openFormat } from './bytes.js'
import { packedKeyBytes, packKeys, unpackKeys } from './key-packing.js'
import { holesOf, type Hole, type MatchList } from './match-list.js'
import { keyBlocks } from './hash-kernel.js'
import { readRanges } from './read-ranges.js'
import { MATCH_MARGIN_BITS, type Signature } from './signature.js'

/**
 * A refinement round's signature: for some holes of a match list (holesOf), the seed range
 * around each hole cut into small blocks, with a weak and a strong key per block, as in a
 * Signature. The sender searches each refined hole for its own range's blocks only, so an edit
 * costs about one small block of literal instead of one round-1 block. Which holes, and the
 * seed ranges, follow from the match list both sides hold: only the hole indices travel.
 */
export interface RefineSignature {
  readonly blockSize: number
  readonly weakBits: number
  readonly strongBits: number
  /** Indices into holesOf(list) of the refined holes, increasing. */
  readonly holes: readonly number[]
  /** Per refined hole, in order, its seed range's blocks' keys (⌈seedLength / blockSize⌉ each). */
  readonly weak: Uint32Array
  readonly strong: Uint32Array
}

/** What the receiver decided to refine (planRefinement); computeRefineSignature fills in the keys. */
export type RefinePlan = Omit<RefineSignature, 'weak' | 'strong'>

/** Refinement blocks: 16 B .. 64 KiB. Below 16 B a block's ~3.5 bytes of keys cost > 20% of it. */
export const MIN_REFINE_BLOCK = 16
export const MAX_REFINE_BLOCK = 64 * 1024

/** Key bytes per refinement block, for sizing (26–33 bits, refineKeyBits). */
const REFINE_KEY_BYTES = 3.75

/** A hole is refined only when its seed range is at most this long: larger ones are rewrites. */
const MAX_REFINE_RANGE = 4 * 1024 * 1024

/**
 * A refined range is at most this many of the last round's blocks (refinable): an edit inside a
 * run of copies leaves one or two unmatched. After a round 1 whose blocks were sized with no
 * idea of the changes (a direct plan: blockSizeForUnknownChange), DIRECT_REFINE_SPAN: there,
 * edits in one page in ten of random data (20 MiB, 64 B each) left runs of unmatched 18 KiB
 * blocks longer than 4 (two clean blocks in a row restart a run), which went as literals:
 * 4.06 MB both ways, against 165 KB with the chunk lists' block size; with 32, 195 KB (a review,
 * by hand). A range that long which is really rewritten costs its keys, ~1.5% of it.
 */
export const REFINE_SPAN = 4
export const DIRECT_REFINE_SPAN = 32

/** Most blocks in one refinement signature: ~2 MiB of keys, under the plan message's 3 MiB
 *  signature limit (protocol/messages.ts). Past it the round's blocks grow instead. */
export const MAX_REFINE_BLOCKS = 512 * 1024

/**
 * Is refining `h` likely to pay? Its seed range must exist (not an append or a move), be at
 * most a few of the last round's blocks (an edit inside a run of copies leaves one or two
 * blocks unmatched; a longer range is a rewrite, or a hole an earlier round already refined in
 * vain), and be of a size like the hole's: an edit changes a range's length by its own size,
 * and a hole much longer or shorter than its range is a large insertion or deletion, where the
 * keys would buy nothing. `prevBlock`: the block size of the round that left the holes;
 * `span`: how many of its blocks a refined range may be (planRefinement).
 */
function refinable(h: Hole, prevBlock: number, span: number): boolean {
  return (
    h.seedLength > 0 &&
    h.seedLength <= Math.min(MAX_REFINE_RANGE, span * prevBlock) &&
    h.seedLength <= 2 * h.length + prevBlock &&
    h.length <= 2 * h.seedLength + prevBlock
  )
}

/**
 * Bits per block so that a false match in the round stays near 2^-MATCH_MARGIN_BITS (keyBits'
 * reasoning, with what a round knows about its holes):
 * - one-block tests (a run continuing, the block a run predicts) can go wrong only where they
 *   should fail, which ends a run: a run in a hole starts at the hole, at a confirmed search hit
 *   or at a predicted block, so natural edits (one or two per hole) fail ~2 such tests per hole;
 *   4 per hole are budgeted (`holes`). A hole with 100 edits would make it ~2^-15, and a false
 *   match costs a resend (DIGEST_MISMATCH), never a wrong file. Budgeting every block instead
 *   (as one round does) cost 33 bits where 28 do: 50 MiB with 100 overwrites, round 2 keys
 *   22.3 → 18.8 KB;
 * - searched windows are compared with their own hole's blocks only (`windowTests` = Σ hole
 *   length × its blocks), and a hit needs the next block too: 2 × bits.
 * The weak part keeps strong hashing below ~1/4 of a block per byte searched (a hole's index
 * has at most `maxCount` blocks).
 */
export function refineKeyBits(holes: number, windowTests: number, maxCount: number, blockSize: number): { weakBits: number; strongBits: number } {
  const total = Math.ceil(Math.max(Math.log2(Math.max(2, 4 * holes)) + MATCH_MARGIN_BITS, (Math.log2(Math.max(2, windowTests)) + MATCH_MARGIN_BITS) / 2))
  const weakBits = Math.min(24, Math.max(8, Math.ceil(Math.log2(4 * Math.max(1, maxCount) * blockSize))))
  const strongBits = Math.min(32, Math.max(8, total - weakBits))
  return { weakBits, strongBits }
}

/**
 * Which holes to refine and at what block size, or null when no hole is worth it. The block
 * size balances keys against literal for the median refined range g: g/b keys cost
 * g/b · 3.75 bytes and an edit wastes about b bytes, least at b = √(3.75 · g). Measured
 * (bench/bytes.ts, in-process rounds): see protocol/DELTA.md "Refinement".
 * `prevBlock`: the block size of the round that found the matches; each round's blocks are at
 * most half the last round's, so the rounds end (at MIN_REFINE_BLOCK at the latest).
 */
export function planRefinement(list: MatchList, prevBlock: number, span: number = REFINE_SPAN): RefinePlan | null {
  const holes = holesOf(list)
  const picked: number[] = []
  holes.forEach((h, i) => {
    if (refinable(h, prevBlock, span)) picked.push(i)
  })
  if (picked.length === 0) return null
  const ranges = picked.map((i) => holes[i]!.seedLength).sort((a, b) => a - b)
  const g = ranges[ranges.length >> 1]!
  let b = Math.min(MAX_REFINE_BLOCK, Math.floor(prevBlock / 2 / 16) * 16, Math.round(Math.sqrt(REFINE_KEY_BYTES * g) / 16) * 16)
  if (b < MIN_REFINE_BLOCK) return null
  const blocksAt = (size: number): number => picked.reduce((n, i) => n + Math.ceil(holes[i]!.seedLength / size), 0)
  while (blocksAt(b) > MAX_REFINE_BLOCKS && b < MAX_REFINE_BLOCK) b *= 2
  if (blocksAt(b) > MAX_REFINE_BLOCKS) return null
  // Not worth a round trip when the holes are already about one block of this round each.
  if (g < 4 * b) return null
  return { blockSize: b, holes: picked, ...keyBitsFor(holes, picked, b) }
}

/** Refinement rounds after the first, at most (DELTA.md: 2–3 on the bench's edits). */
export const MAX_REFINE_ROUNDS = 4

/**
 * The round after match list `list`, which round `round` found (0: round 1, from the plan's
 * signature of `prevBlock` blocks), or null when the rounds end: planRefinement, with the
 * longer span of DIRECT_REFINE_SPAN after round 1 of a direct plan, and none past
 * MAX_REFINE_ROUNDS. The receiver's rule; a sender of protocol version 9 runs it too on the list
 * it sent, and sends its delta without waiting to be told (PROTOCOL.md §4.1).
 */
export function nextRefinement(list: MatchList, prevBlock: number, round: number, direct: boolean): RefinePlan | null {
  if (round >= MAX_REFINE_ROUNDS) return null
  return planRefinement(list, prevBlock, round === 0 && direct ? DIRECT_REFINE_SPAN : REFINE_SPAN)
}

function keyBitsFor(holes: readonly Hole[], picked: readonly number[], b: number): { weakBits: number; strongBits: number } {
  let windows = 0
  let maxCount = 0
  for (const i of picked) {
    const n = Math.ceil(holes[i]!.seedLength / b)
    windows += holes[i]!.length * n
    maxCount = Math.max(maxCount, n)
  }
  return refineKeyBits(picked.length, windows, maxCount, b)
}

/** Reads each planned hole's seed range once and keys its blocks (the last of a range may be short). */
export async function computeRefineSignature(seed: SeedReader, list: MatchList, plan: RefinePlan, opts: { signal?: AbortSignal } = {}): Promise<RefineSignature> {
  const holes = holesOf(list)
  const b = plan.blockSize
  const ranges = plan.holes.map((i) => {
    const h = holes[i]
    if (h === undefined || h.seedLength === 0 || h.seed + h.seedLength > seed.size) throw new DsyncError('INTERNAL', `refinement plan names hole ${i}, which has no seed range`)
    return { offset: h.seed, length: h.seedLength }
  })
  // A key per block, the last of a range short: counted ahead, written in place.
  const count = ranges.reduce((n, r) => n + Math.ceil(r.length / b), 0)
  const weak = new Uint32Array(count)
  const strong = new Uint32Array(count)
  let k = 0
  // Each range in one read (its blocks keyed from its start), read ahead of the keying.
  for await (const { bytes } of readRanges(seed, ranges, { signal: opts.signal })) {
    keyBlocks(bytes, b, (w, s) => {
      weak[k] = w >>> (32 - plan.weakBits)
      strong[k++] = s >>> (32 - plan.strongBits)
    })
  }
  if (k !== count) throw new DsyncError('INTERNAL', `refinement signature of ${k} keys, ${count} planned`)
  return { ...plan, weak, strong }
}

/** The per-hole Signature the matcher searches: hole `k` of the plan, whose keys start at `first`. */
export function holeSignature(sig: RefineSignature, seedLength: number, first: number): Signature {
  const n = Math.ceil(seedLength / sig.blockSize)
  return {
    seedSize: seedLength,
    blockSize: sig.blockSize,
    weakBits: sig.weakBits,
    strongBits: sig.strongBits,
    weak: sig.weak.subarray(first, first + n),
    strong: sig.strong.subarray(first, first + n),
  }
}

/** "dsR", a refinement signature's magic (protocol/DELTA.md, "Refinement"). */
export const REFINE_MAGIC = Object.freeze([0x64, 0x73, 0x52])
export const REFINE_VERSION = 1

/** magic, version, blockSize, weakBits, strongBits, hole count, per hole the index step
 *  (index − previous index − 1), then the packed keys of every refined hole's blocks. */
export function encodeRefineSignature(sig: RefineSignature): Uint8Array {
  const w = new ByteWriter(32 + 2 * sig.holes.length + packedKeyBytes(sig.weak.length, sig.weakBits, sig.strongBits))
  for (const m of REFINE_MAGIC) w.u8(m)
  w.u8(REFINE_VERSION)
  w.varint(sig.blockSize)
  w.u8(sig.weakBits)
  w.u8(sig.strongBits)
  w.varint(sig.holes.length)
  let prev = -1
  for (const i of sig.holes) {
    w.varint(i - prev - 1)
    prev = i
  }
  w.bytes(packKeys(sig.weak, sig.strong, sig.weakBits, sig.strongBits))
  return w.take()
}

/**
 * Decodes a refinement signature against the match list it refines (the sender's own). BAD_DATA
 * when a field is out of range, a named hole does not exist or has no seed range, the blocks
 * pass MAX_REFINE_BLOCKS (a peer's 3 MiB of 2-bit keys would otherwise be 12 M blocks, ~100 MB
 * of key arrays), or the key section is not exactly the length the holes imply (checked before
 * allocating).
 */
export function decodeRefineSignature(bytes: Uint8Array, list: MatchList): RefineSignature {
  const r = openFormat(bytes, REFINE_MAGIC, REFINE_VERSION, 'refinement signature')
  const blockSize = r.varint()
  const weakBits = r.u8()
  const strongBits = r.u8()
  ensureData(blockSize >= MIN_REFINE_BLOCK && blockSize <= MAX_REFINE_BLOCK, `refinement signature: block size ${blockSize} out of range`)
  ensureData(weakBits >= 1 && weakBits <= 32 && strongBits >= 1 && strongBits <= 32, 'refinement signature: key widths out of range')
  const all = holesOf(list)
  const n = r.varint()
  ensureData(n <= all.length, `refinement signature names ${n} holes; the match list has ${all.length}`)
  const holes: number[] = []
  let blocks = 0
  let prev = -1
  for (let k = 0; k < n; k++) {
    const i = prev + 1 + r.varint()
    const h = all[i]
    ensureData(h !== undefined && h.seedLength > 0, `refinement signature names hole ${i}, which the match list does not have (or which has no seed range)`)
    holes.push(i)
    blocks += Math.ceil(h.seedLength / blockSize)
    ensureData(blocks <= MAX_REFINE_BLOCKS, `refinement signature: more than ${MAX_REFINE_BLOCKS} blocks`)
    prev = i
  }
  ensureData(r.left === packedKeyBytes(blocks, weakBits, strongBits), 'refinement signature: key section length does not match its holes')
  const { weak, strong } = unpackKeys(r.bytes(r.left), blocks, weakBits, strongBits)
  return { blockSize, weakBits, strongBits, holes, weak, strong }
}
