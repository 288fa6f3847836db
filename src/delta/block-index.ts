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
  /** weak key → first position in #order. */
  readonly #first = new Map<number, number>()

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
    const order = new Int32Array(full)
    for (let i = 0; i < full; i++) order[i] = i
    order.sort((a, b) => sig.weak[a]! - sig.weak[b]! || a - b)
    this.#order = order
    for (let j = 0; j < full; j++) {
      const w = sig.weak[order[j]!]!
      if (j === 0 || sig.weak[order[j - 1]!]! !== w) this.#first.set(w, j)
      const f = w >>> this.filterShift
      this.filter[f >>> 3]! |= 1 << (f & 7)
    }
  }

  /** Cheap first test: false means no block has this weak key. */
  mayHave(weak: number): boolean {
    const f = weak >>> this.filterShift
    return (this.filter[f >>> 3]! & (1 << (f & 7))) !== 0
  }

  /** Up to `max` blocks whose weak key is `weak`, in seed order, passed to `visit` until it
   *  returns true. Returns the block `visit` accepted, or -1. */
  find(weak: number, max: number, visit: (block: number) => boolean): number {
    const j0 = this.#first.get(weak)
    if (j0 === undefined) return -1
    const order = this.#order
    const keys = this.sig.weak
    for (let j = j0; j < order.length && j < j0 + max && keys[order[j]!] === weak; j++) {
      if (visit(order[j]!)) return order[j]!
    }
    return -1
  }
}
