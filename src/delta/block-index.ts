import type { Signature } from './signature.js'

/** Bits of the prefilter bitmap (2^23 bits = 1 MiB at most): an absent key costs one bit test,
 *  not a Map probe, on the byte-by-byte search path. */
const MAX_FILTER_BITS = 23

/**
 * The sender's lookup over a signature's full-size blocks: weak key → blocks with that key, in
 * seed order. The last block, when shorter than blockSize, is not indexed: the search rolls a
 * blockSize window, so it is found only where a run of matches reaches it, or at the target's end.
 */
export class BlockIndex {
  readonly filterShift: number
  readonly filter: Uint8Array
  /** Block indices sorted by (weak key, index). */
  readonly #order: Int32Array
  /** The weak key of each block of #order, ascending: searched by bisection. A Map of weak key
   *  → first position cost most of an index's making (keys past 2^30 are heap numbers). By
   *  hand, an index of random keys (µs, warm): 300 blocks 60 → 48, 5,000 blocks 2,206 → 951,
   *  100,000 blocks 59,159 → 15,289; a 256 MiB delta (`dsync delta`, 1,024 overwrites) the same
   *  bytes in the same time. */
  readonly #keys: Uint32Array

  constructor(readonly sig: Signature) {
    const full = sig.blockSize > 0 ? Math.floor(sig.seedSize / sig.blockSize) : 0
    // ~256 bits per block (up to 1 MiB): each key that passes costs a return from the search
    // kernel and a Map probe in JS, so false positives (6% of positions at 16 bits a block, 0.4%
    // at 256) were most of a search through bytes that match nothing. 1 GiB against a 1 GiB
    // seed's 163 KB signature (`dsync delta`, by hand, CPU s): unrelated 8.1–8.4 → 7.0–7.3,
    // 1,024 scattered overwrites 2.07–2.13 → 1.85–1.99. A small seed's filter stays small (a
    // fixed 1 MiB filter per file dominated small-file syncs): 20 blocks, 1 KiB.
    const filterBits = Math.min(sig.weakBits, MAX_FILTER_BITS, Math.max(10, Math.ceil(Math.log2(full + 1)) + 8))
    this.filterShift = sig.weakBits - filterBits
    this.filter = new Uint8Array(Math.max(1, (1 << filterBits) >>> 3))
    const order = sortedByKey(sig.weak, full)
    const keys = new Uint32Array(full)
    for (let j = 0; j < full; j++) {
      const w = (keys[j] = sig.weak[order[j]!]!)
      const f = w >>> this.filterShift
      this.filter[f >>> 3]! |= 1 << (f & 7)
    }
    this.#order = order
    this.#keys = keys
  }

  /** Cheap first test: false means no block has this weak key. */
  mayHave(weak: number): boolean {
    const f = weak >>> this.filterShift
    return (this.filter[f >>> 3]! & (1 << (f & 7))) !== 0
  }

  /** Up to `max` blocks whose weak key is `weak`, in seed order, passed to `visit` until it
   *  returns true. Returns the block `visit` accepted, or -1. */
  find(weak: number, max: number, visit: (block: number) => boolean): number {
    const keys = this.#keys
    let lo = 0
    let hi = keys.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (keys[mid]! < weak) lo = mid + 1
      else hi = mid
    }
    const order = this.#order
    for (let j = lo; j < keys.length && j < lo + max && keys[j] === weak; j++) {
      if (visit(order[j]!)) return order[j]!
    }
    return -1
  }
}

/** Block indices up to this fit beside a 32-bit key in a double's 53 bits (sortedByKey). */
const PACKED_INDEX = 2 ** 21

/**
 * Blocks 0 … n-1 sorted by (weak key, index). Each as one double, key × 2^21 + index, sorted by
 * the typed array's own numeric sort: with a comparator each comparison was a call into
 * JavaScript. Past 2^21 blocks (a seed of 1 GiB at 512-byte blocks), the comparator sort.
 */
function sortedByKey(weak: Uint32Array, n: number): Int32Array {
  const order = new Int32Array(n)
  if (n < PACKED_INDEX) {
    const packed = new Float64Array(n)
    for (let i = 0; i < n; i++) packed[i] = weak[i]! * PACKED_INDEX + i
    packed.sort()
    for (let j = 0; j < n; j++) order[j] = packed[j]! % PACKED_INDEX
    return order
  }
  for (let i = 0; i < n; i++) order[i] = i
  return order.sort((a, b) => weak[a]! - weak[b]! || a - b)
}
