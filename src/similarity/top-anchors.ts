import { GearScan, LONG_WINDOW, maskOf } from './gear-scan.js'
import type { SketchOptions } from './sketch.js'
import { gearKernel } from './sketch-wasm.js'

/**
 * A file's `n` highest anchors, by key, without its sketch: what a probe sends (PROTOCOL.md §4.6,
 * `anchors`: sketch-index.ts probeAnchorKeys of the file's sketch). The same Gear loop as
 * SketchBuilder's format 1 (sketch.ts) and the same order, a position's h by leading zero bits
 * then by value then by place, so the keys are the same (test/similarity/top-anchors.ts checks
 * it against the sketch on text, random bytes, runs, short periods and any split). One
 * difference: a sketch's level rises with its count of anchors, repeats included, so the sketch
 * of a period of a few bytes can end above all but k < n of its keys and give only those; this
 * gives them first, then the next highest (keys the receiver looks up and may not find).
 *
 * Why: the sketch keeps ~2,048 anchors a MiB, each stopping the WebAssembly loop and added in
 * JavaScript, and a probe reads 8 of them. Here the loop stops only at positions that can still
 * be among the highest: the level rises as soon as n keys stand above it. 1 MiB of random bytes,
 * by hand: sketch and keys 5.3–7.4 ms, the loop alone at level 16 1.9 ms.
 *
 * Memory: one entry per distinct key above the level (about 2n); a file built so that most of
 * its anchors share one level and differ (its own sender's file: it costs only that sender)
 * holds more.
 *
 * Given the file's size, the level starts where a file of that size all but surely keeps n keys
 * above (startLevel) instead of at 0: the loop then skips the positions that could not be among
 * the highest, and runs in WebAssembly from the start, where it ran in JavaScript until the level
 * reached KERNEL_LEVEL: ~32 KiB of a 256 KiB file for 64 keys, ~4 KiB for 8, in a new process
 * (a push's) before V8 has optimized that loop. 40 files of 256 KiB (64 keys) and 50 of 20 KiB
 * of text (8), in a new process, by hand: the JavaScript loop and its anchors were ~57 of ~85 ms;
 * told the sizes, 74–113 → 43–56 ms in all.
 * The keys are the same: any key among the n highest stands at or above the start, unless fewer
 * than n distinct keys do (a file of a few repeated bytes); finish() then says so (undefined),
 * and the file is fed again to a finder without the size.
 */
export class TopAnchors {
  readonly #n: number
  readonly #key: (short: number, prior: number) => number
  /** anchors kept have h with at least this many leading zero bits */
  #level = 0
  /** key → the best placed anchor with that key: [short, prior, place] */
  readonly #best = new Map<number, [number, number, number]>()
  /** #best's size at which the level is next looked at (doubling: each look costs its size) */
  #nextLook: number
  readonly #gear: GearScan

  /** the level the loop started at (startLevel of the size given, else 0) */
  readonly #start: number

  /** `key`: an anchor's key from its h and prior (the index's posting key). `kernel` as for a
   *  sketch (tests run both). `size`: the file's size in bytes, to start the level where that
   *  size allows (see the class's comment). */
  constructor(n: number, key: (short: number, prior: number) => number, opts: Pick<SketchOptions, 'kernel'> & { size?: number } = {}) {
    const kernel = opts.kernel === 'js' ? undefined : gearKernel()
    if (opts.kernel === 'wasm' && kernel === undefined) throw new Error('the WebAssembly sketch kernel is not available in this runtime')
    // JavaScript while the level is low: nearly every position passes, and the kernel would stop at each.
    this.#gear = new GearScan(kernel, () => maskOf(this.#level), () => this.#level < KERNEL_LEVEL, (h, prior, place) => this.#add(h, prior, place))
    this.#n = n
    this.#key = key
    this.#nextLook = 2 * n
    this.#start = opts.size === undefined ? 0 : startLevel(opts.size, n)
    this.#level = this.#start
  }

  /** Feeds the next bytes of the file. `data` is not kept. */
  update(data: Uint8Array): void {
    this.#gear.feed(data)
  }

  #add(short: number, prior: number, place: number): void {
    const key = this.#key(short, prior)
    const old = this.#best.get(key)
    // A key seen again keeps its best place (keys of other anchors can coincide by chance).
    if (old !== undefined && !before(short, place, old[0], old[2])) return
    this.#best.set(key, [short, prior, place])
    if (this.#best.size >= this.#nextLook) this.#raise()
  }

  /** Raises the level while n keys stand above it. */
  #raise(): void {
    for (;;) {
      let above = 0
      for (const [short] of this.#best.values()) if (Math.clz32(short) > this.#level) above++
      if (above < this.#n || this.#level >= 32) break
      this.#level++
      for (const [key, [short]] of this.#best) if (Math.clz32(short) < this.#level) this.#best.delete(key)
    }
    this.#nextLook = Math.max(2 * this.#n, 2 * this.#best.size)
  }

  /** The keys of the n highest anchors (fewer when the file has fewer), highest first; undefined
   *  when the level started above 0 and fewer than n keys stood there: feed the file again to a
   *  finder made without its size. */
  finish(): number[] | undefined {
    if (this.#start > 0 && this.#best.size < this.#n) return undefined
    const ranked = [...this.#best].sort(([, a], [, b]) => (before(a[0], a[2], b[0], b[2]) ? -1 : 1))
    return ranked.slice(0, this.#n).map(([key]) => key)
  }
}

/** From this level on the WebAssembly loop takes over (~1 position in 256 stops it). */
const KERNEL_LEVEL = 8

/**
 * The level a file of `size` bytes can start at for its n highest keys: the highest at which it
 * has at least 8n positions on average (8n to 16n; a position clears level L with probability
 * 2^-L), so that fewer than n distinct keys stand there only in files whose anchors repeat
 * (runs, short periods, the same lines over and over). 20 KiB for 8 keys: level 8; 256 KiB for
 * 64: 9; 1 MiB for 64: 11.
 */
function startLevel(size: number, n: number): number {
  let level = 0
  while (level < 31 && (size - LONG_WINDOW) / 2 ** (level + 1) >= 8 * n) level++
  return level
}

/** Whether the anchor (short, place) ranks before (short2, place2): more leading zero bits,
 *  then the smaller h, then the earlier place (probeAnchorKeys' order). */
function before(short: number, place: number, short2: number, place2: number): boolean {
  const z = Math.clz32(short) - Math.clz32(short2)
  if (z !== 0) return z > 0
  return short !== short2 ? short < short2 : place < place2
}
