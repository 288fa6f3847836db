import type { ChunkParams } from '../chunk/index.js'
import { DsyncError } from '../errors.js'
import { keyBlocks } from './hash-kernel.js'

/**
 * What the receiver tells the sender about its seed: the seed cut into fixed-size blocks, and
 * for each block a short weak key (rolling: found at any byte offset of the target) and a short
 * strong key (bits of the block's MurmurHash3, block-hash.ts). Blocks `0..count-1` cover the seed in order; all
 * are `blockSize` long but the last, which holds the rest.
 *
 * Why fixed blocks and not the CDC chunk list: with a rolling search a fixed block is found at
 * any offset, so an edit costs one block of literal whatever its kind, and a block needs no
 * length on the wire. A CDC chunk costs ~1.2 chunks per edit (the chunk holding the edit is
 * size-biased, and a cut may move) plus ~2 bytes of length. Figures against rdiff and rsync:
 * protocol/DELTA.md "Measured".
 */
export interface Signature {
  /** Bytes in the seed. */
  readonly seedSize: number
  /** Bytes per block (the last block may be shorter). 0 only in EMPTY_SIGNATURE. */
  readonly blockSize: number
  /** Bits kept of each block's rolling hash, 1..32. */
  readonly weakBits: number
  /** Bits kept of each block's strong hash (blockHash), 1..32. */
  readonly strongBits: number
  /** Per block: the top `weakBits` of the rolling hash (weakKey), right-aligned. */
  readonly weak: Uint32Array
  /** Per block: the top `strongBits` of blockHash(block), right-aligned. */
  readonly strong: Uint32Array
}

/** "No seed": a delta against it carries the whole target, compressed. */
export const EMPTY_SIGNATURE: Signature = Object.freeze({
  seedSize: 0,
  blockSize: 0,
  weakBits: 32,
  strongBits: 32,
  weak: new Uint32Array(0),
  strong: new Uint32Array(0),
})

/** Block size bounds. Below 256 B a block's ~4.5 bytes of sums cost more than 2% of it; above
 *  1 MiB a single edit costs a megabyte of literal. */
export const MIN_BLOCK = 256
export const MAX_BLOCK = 1024 * 1024

/**
 * Probability budget for a false block match, as bits: a signature is sized so that the chance
 * that any block of a delta is wrongly matched is about 2^-MATCH_MARGIN_BITS (one file in a
 * million). A false match is not silent: the target's SHA-256 in the delta fails and sync
 * resends the file whole. rsync's own budget (generator.c sum_sizes_sqroot, BLOCKSUM_BIAS) is
 * 2^-10 per file; we spend fewer bits per block than rsync anyway (see keyBits).
 */
export const MATCH_MARGIN_BITS = 20

/** Fewest strong bits per block: a floor under the identity the weak hash alone provides. */
const MIN_STRONG_BITS = 12

/**
 * Block size for a seed of `size` bytes: √size, as rsync and librsync do, which balances the
 * signature (size/b blocks) against the literal one edit costs (b). Rounded to 64 bytes.
 */
export function blockSizeFor(size: number): number {
  const b = Math.round(Math.sqrt(size) / 64) * 64
  return Math.min(MAX_BLOCK, Math.max(MIN_BLOCK, b))
}

/** Signature bytes per block, near enough for sizing: 30–36 bits of keys (see keyBits). */
const SIGNATURE_BYTES_PER_BLOCK = 4.5

/**
 * Block size when the receiver knows roughly how many separate regions of the target changed
 * (runs of CDC chunks the seed does not have; sync learns them from the target's chunk list
 * before it builds the signature). Each region costs about one block of literal beyond its own
 * new bytes, and the signature costs 4.5 bytes a block, so the total
 * size/b · 4.5 + regions · b is least at b = √(4.5 · size / regions). √size (rsync's rule)
 * is right only for about 4.5 regions. Measured on 50 MB of random bytes with 100 scattered
 * 64-byte overwrites (signature + delta): 7040-byte blocks (√size) 720 KiB; 1472-byte blocks
 * (this rule, 100 regions) 300 KiB; 1024 B 323 KiB; 2048 B 314 KiB.
 */
export function blockSizeForChange(size: number, changedRegions: number): number {
  const b = Math.round(Math.sqrt((SIGNATURE_BYTES_PER_BLOCK * size) / Math.max(1, changedRegions)) / 64) * 64
  return Math.min(MAX_BLOCK, Math.max(MIN_BLOCK, b))
}

/**
 * Round-1 block size when nothing says how much of the target changed (a plan made with no chunk
 * list: sync's `want.direct`), refinement rounds following: sized as blockSizeForRefinement for
 * one changed region per MiB (~18 KiB blocks whatever the size), but never below √size (rsync's
 * rule, which blockSizeForChange gives for ~4.5 regions). Below ~320 MB the first rule wins:
 * round 1 sends a smaller signature, and the rounds find the edits in its larger holes. By hand
 * (one file changed in place, signature + rounds + delta, both ways), √size against this:
 * 30 MiB with 1 KiB inserted 26,625 → 10,008 B; 50 MiB with 100 × 64 B overwritten 66,499 →
 * 57,008 B; 20 MiB of log with 1 MiB appended 352,392 → 337,545 B. 1 GiB: 32 KiB blocks (√size,
 * 147 KB); one region per MiB there (1,024 overwrites) would be 1.94 MB in all against 1.78.
 */
export function blockSizeForUnknownChange(size: number): number {
  return Math.max(blockSizeForChange(size, SIGNATURE_BYTES_PER_BLOCK), blockSizeForRefinement(size, size / (1024 * 1024)))
}

/** Key bytes per block of a refinement round, for sizing (refine-signature.ts). */
const REFINE_BYTES_PER_BLOCK = 3.75

/**
 * Round-1 block size when refinement rounds follow (refine.ts): a region's cost is then no
 * longer one round-1 block of literal but a refinement of its range, about 2·√(3.75 · b) bytes
 * of keys and literal (planRefinement's block size, √(3.75 · b)). The total
 * size/b · 4.5 + regions · 2·√(3.75 · b) is least at b = (4.5 · size / (regions · √3.75))^(2/3):
 * larger blocks and a smaller signature than blockSizeForChange. 20 MiB, 6 regions: 40 KiB
 * (blockSizeForChange: 3.9 KiB); 110 KiB, 4 regions: 1.6 KiB (384 B).
 */
export function blockSizeForRefinement(size: number, changedRegions: number): number {
  const b = Math.round(((SIGNATURE_BYTES_PER_BLOCK * size) / (Math.max(1, changedRegions) * Math.sqrt(REFINE_BYTES_PER_BLOCK))) ** (2 / 3) / 64) * 64
  return Math.min(MAX_BLOCK, Math.max(MIN_BLOCK, b))
}

/**
 * How many weak and strong bits each block keeps, for `count` blocks in a seed of `size` bytes.
 *
 * - weak: enough that a window of the target that matches no block rarely passes the weak test
 *   (the strong test hashes a whole block): ⌈log2 size⌉ − 2 bits gives fewer than ~4 bytes
 *   strong-hashed per byte searched, whatever the block size.
 * - total: the matcher accepts a block found by search only when the next block matches too
 *   (2 × bits vs every block at every offset of a ≤ 4 GiB target), and a block that continues
 *   a run is compared with that one block alone (bits vs count):
 *   bits ≥ max(log2 count + margin, (32 + log2 count + margin) / 2). The one-block tests are a
 *   continuation after each block copied, and at most one more per run (the block the run
 *   predicts after one overwritten block, encode-delta.ts): at most ~count + runs tests, ~count
 *   for a target like its seed (few runs), 2 × count at worst (runs of one block), so the chance
 *   of a false match stays within 2^-(margin-1) per file.
 * For 20 MB: 4480-byte blocks, 23 + 12 = 35 bits (4.4 bytes) per block; rsync spends 48.
 */
export function keyBits(size: number, count: number): { weakBits: number; strongBits: number } {
  const lc = Math.log2(Math.max(2, count))
  const total = Math.ceil(Math.max(lc + MATCH_MARGIN_BITS, (32 + lc + MATCH_MARGIN_BITS) / 2))
  const weakBits = Math.min(32, Math.max(16, Math.ceil(Math.log2(Math.max(2, size))) - 2))
  const strongBits = Math.min(32, Math.max(MIN_STRONG_BITS, total - weakBits))
  return { weakBits, strongBits }
}

/** Options of computeSignature. */
export interface SignatureOptions {
  /** Expected seed size in bytes: sizes the blocks (blockSizeFor). A wrong guess costs bytes,
   *  never correctness: the signature records the size actually read. */
  readonly size?: number
  /** Block size, overriding the one derived from `size` (tests, benchmarks). */
  readonly blockSize?: number
  /** Accepted for callers of the first API draft; blocks are sized from the seed, not by CDC
   *  params (see Signature). */
  readonly params?: ChunkParams
  readonly signal?: AbortSignal
}

/** Block size used when neither `size` nor `blockSize` is given. */
export const DEFAULT_BLOCK = 2048

/**
 * Reads the seed once, in memory bounded by one block plus 8 bytes per block of sums, and
 * returns its signature. The stream may yield buffers of any size and reuse them.
 */
export async function computeSignature(seed: AsyncIterable<Uint8Array>, opts: SignatureOptions = {}): Promise<Signature> {
  const b = opts.blockSize ?? (opts.size !== undefined ? blockSizeFor(opts.size) : DEFAULT_BLOCK)
  if (!Number.isSafeInteger(b) || b < 1 || b > MAX_BLOCK) {
    throw new DsyncError('USAGE', `signature block size must be 1..${MAX_BLOCK} bytes, got ${b}`)
  }
  // A block cut across two reads is put together here; whole blocks are keyed where they lie.
  const block = new Uint8Array(b)
  const rawWeak: number[] = []
  const rawStrong: number[] = []
  let filled = 0
  let size = 0
  // Full 32-bit keys while reading; truncated at the end, when the block count is known.
  const onBlock = (weak: number, strong: number): void => {
    rawWeak.push(weak >>> 0)
    rawStrong.push(strong)
  }
  for await (const input of seed) {
    if (opts.signal?.aborted) throw new DsyncError('ABORTED', 'signature cancelled', { cause: opts.signal.reason })
    let taken = 0
    if (filled > 0) {
      taken = Math.min(b - filled, input.length)
      block.set(input.subarray(0, taken), filled)
      filled += taken
      if (filled === b) {
        keyBlocks(block, b, onBlock)
        filled = 0
      }
    }
    const whole = Math.floor((input.length - taken) / b) * b
    if (whole > 0) keyBlocks(input.subarray(taken, taken + whole), b, onBlock)
    taken += whole
    if (taken < input.length) {
      block.set(input.subarray(taken), 0)
      filled = input.length - taken
    }
    size += input.length
  }
  if (filled > 0) keyBlocks(block.subarray(0, filled), b, onBlock)
  const { weakBits, strongBits } = keyBits(size, rawWeak.length)
  const weak = Uint32Array.from(rawWeak, (w) => w >>> (32 - weakBits))
  const strong = Uint32Array.from(rawStrong, (s) => s >>> (32 - strongBits))
  return { seedSize: size, blockSize: b, weakBits, strongBits, weak, strong }
}
