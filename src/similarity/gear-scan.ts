import { GEAR } from '../chunk/index.js'
import type { GearKernel } from './sketch-wasm.js'

/** Bytes of the short window (Gear's reach in a 32-bit hash). */
export const SHORT_WINDOW = 32
/** Bytes of the long window: the truth's minimum shared substring (issue 10). */
export const LONG_WINDOW = 64

/** Bits of h(p − 32) kept: the long key uses 21 (sketch-estimate.ts); 3 bytes on the wire. */
export const PRIOR_MASK = 0xffffff

/** Pieces shorter than this go through the JS loop: the kernel copies each piece and its ring in
 *  and out, and small files sample nearly every byte while their level rises. */
const KERNEL_MIN_BYTES = 4096

/** The mask a position's h must clear to be sampled at `level` (its top `level` bits zero). */
export function maskOf(level: number): number {
  return level === 0 ? 0 : (-1 << (32 - level)) | 0
}

/**
 * The Gear loop of a sketch's anchors (sketch.ts: format 1's definition), shared by the sketch
 * and by the probe's highest anchors (top-anchors.ts): Gear's h at every byte, the last 32 in a
 * ring, and each position from LONG_WINDOW − 1 on whose h clears `mask()` given to `onAnchor`
 * with h, the h of 32 positions back (PRIOR_MASK bits) and its place (0-based). `mask()` is read
 * again after each anchor (one may raise the level). The WebAssembly kernel runs it where it
 * pays; JavaScript for the file's first positions and while `dense()` (nearly every position
 * passes: the kernel would stop at each). The same anchors either way, for any split of the
 * input (test/similarity/sketch.ts).
 */
export class GearScan {
  /** Gear's h after the last byte fed */
  h = 0
  /** bytes fed so far */
  pos = 0
  /** h of the last SHORT_WINDOW positions, by position mod SHORT_WINDOW */
  readonly ring = new Int32Array(SHORT_WINDOW)

  constructor(
    private readonly kernel: GearKernel | undefined,
    private readonly mask: () => number,
    private readonly dense: () => boolean,
    private readonly onAnchor: (h: number, prior: number, place: number) => void,
  ) {}

  /** Feeds the next bytes of the file. `data` is not kept. */
  feed(data: Uint8Array): void {
    const kernel = this.kernel
    let at = 0
    // JavaScript in pieces that double: a file whose level rises soon (most do, within ~600
    // bytes) moves to the kernel soon, and one that stays dense pays few calls (zeros: 116 ms
    // per 16 MiB in one loop, 169 ms in 4 KiB pieces).
    while (kernel !== undefined && at < data.length && (this.pos < LONG_WINDOW - 1 || this.dense())) {
      const n = Math.min(data.length - at, this.pos < LONG_WINDOW - 1 ? LONG_WINDOW - 1 - this.pos : Math.max(KERNEL_MIN_BYTES, at))
      this.#feedJs(data.subarray(at, at + n))
      at += n
    }
    const rest = at === 0 ? data : data.subarray(at)
    if (kernel === undefined || rest.length < KERNEL_MIN_BYTES) return this.#feedJs(rest)
    const pos = this.pos
    this.h = kernel.feed(rest, pos, this.h, this.ring, this.mask, (i, h, prior) => this.onAnchor(h >>> 0, prior & PRIOR_MASK, pos + i))
    this.pos = pos + rest.length
  }

  /** The loop in JavaScript (the kernel's definition). */
  #feedJs(data: Uint8Array): void {
    const ring = this.ring
    let h = this.h
    let pos = this.pos
    let mask = this.mask()
    for (let i = 0; i < data.length; i++, pos++) {
      h = ((h << 1) + GEAR[data[i]!]!) | 0
      const slot = pos & (SHORT_WINDOW - 1)
      const prior = ring[slot]!
      ring[slot] = h
      if ((h & mask) === 0 && pos >= LONG_WINDOW - 1) {
        this.onAnchor(h >>> 0, prior & PRIOR_MASK, pos)
        mask = this.mask()
      }
    }
    this.h = h
    this.pos = pos
  }
}
