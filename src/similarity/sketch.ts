import { GEAR } from '../chunk/index.js'
import { GearScan, LONG_WINDOW, maskOf, PRIOR_MASK, SHORT_WINDOW } from './gear-scan.js'
import { gearKernel } from './sketch-wasm.js'

export { SHORT_WINDOW, LONG_WINDOW } from './gear-scan.js'

/**
 * A file's similarity sketch: sif's approximate fingerprints (Manber 1994), a content-defined
 * sample of short windows that sees edits far smaller than a transfer chunk.
 *
 * Every byte position p (from SHORT_WINDOW on) has a Gear hash h(p) of the 32 bytes ending
 * at p (the CDC Gear table; Gear's h depends on exactly the last 32 bytes once it has seen
 * them). p is sampled at level L when the top L bits of h(p) are zero: about one position in
 * 2^L, chosen by content, so two files sample the same positions inside what they share.
 * A sampled position is an anchor. Its identities in format 1 (dsync before protocol 5, and the
 * index): short = h(p), long = (h(p), low 24 bits of h(p − 32)). Gear's low bits forget
 * fast (bit i of h depends on the last i + 1 bytes), and an anchor's top `level` bits are 0, so
 * these stand for windows of ~32 − level and 53 bytes, not 32 and 64: the estimate read pieces
 * of 200 bytes 3 points low and counted pieces of 53–63 as shared. Format 2 adds exact ones,
 * hashes of the bytes themselves (`windows`): the 32 bytes ending at p, the 64 ending at p,
 * and the 64 centred on p (whose last 32 come later, so an anchor in the file's last 32 bytes
 * has none). With them the estimate also tells a shared piece of 32–63 bytes (not shared by the
 * truth's rule) from the end of a longer one (sketch-estimate.ts). A sketch at level L holds
 * only anchors whose h has ≥ L leading zeros, so a sketch at a finer level can be cut to any
 * coarser one, and two sketches compare at the coarser of their levels.
 *
 * Size: the level rises while building (dropping anchors below it) so a file keeps between
 * MIN_ANCHORS and 2·MIN_ANCHORS anchors until it is big enough to be sampled at 1/2^DENSE_LEVEL;
 * beyond that the sketch grows with the file up to MAX_ANCHORS (bounded memory at any size).
 */
export interface Sketch {
  /** bytes in the file */
  readonly size: number
  /** anchors hold h with ≥ level leading zero bits (sampling rate ~2^−level) */
  readonly level: number
  /** per anchor, in file order: h(p) */
  readonly short: Uint32Array
  /** per anchor: the low 24 bits of h(p − 32) (the long identity is the pair) */
  readonly prior: Uint32Array
  /** per anchor, the exact windows (format 2); absent in a sketch of format 1 (an older dsync's,
   *  and the index's cut sketches) */
  readonly windows?: AnchorWindows
  /** per anchor: how many sampled positions it stands for (repeats of one window merged) */
  readonly count: Uint32Array
  /** the whole content of a file too small to hold an anchor (< LONG_WINDOW bytes), else empty */
  readonly tiny: Uint8Array
}

/** Per anchor, 24-bit identities of its windows' bytes (windowIdentity). */
export interface AnchorWindows {
  /** the 32 bytes ending at p */
  readonly w32: Uint32Array
  /** the 64 bytes ending at p */
  readonly w64: Uint32Array
  /** the 64 bytes centred on p (p − 31 to p + 32), or NONE_YET in the file's last 32 bytes */
  readonly centred: Uint32Array
}

/**
 * A file keeps at least this many anchors (when it has that many positions): the estimate is a
 * share of anchors, so its sampling error is ~sqrt(p(1 − p)/n), ±3 points at n = 256, p = 0.5.
 * bench/accuracy.ts at 256: MAE 2.2–2.5 points on 4 KiB pairs, 2.5–2.7 on 64 KiB (all patterns);
 * a small file's sketch is then 2–4 KB. Other values were not measured (bench/README.md).
 */
export const MIN_ANCHORS = 256
/**
 * Sampling rate of big files: one position in 2^DENSE_LEVEL. At 1/512, 2048 anchors per MiB:
 * 16 KB of sketch per MiB (1.6%; bench/accuracy.ts), and 1 MiB pairs within MAE 2.3–3.3 points.
 */
export const DENSE_LEVEL = 9
/** Memory bound: 1 Mi anchors (12 MiB while building); files over 512 MiB are sampled sparser. */
export const MAX_ANCHORS = 1 << 20

/** `centred` of an anchor with no 32 bytes after it (the file ends first): matches nothing. */
export const NO_AHEAD = 0xffffffff

/**
 * The exact windows' identities come from a second rolling hash, kept alongside Gear's: a
 * polynomial one over exactly the last 32 bytes, r(q) = Σ b(q − k)·R^k mod 2^32 (k < 32),
 * which any change to one of those bytes changes (R is odd). An anchor's windows are mixes of
 * r at 32-byte steps: r(p) alone for the 32 bytes ending at p, r(p − 32) and r(p) for the 64,
 * r(p) and r(p + 32) for the 64 centred on it. Hashing each anchor's bytes instead (FNV-1a)
 * cost small files 2–3× their speed: they sample nearly every position while their level rises.
 */
const R = 0x01000193
/** R^32 mod 2^32: what the byte leaving the window weighs. */
const R32 = (() => {
  let x = 1
  for (let k = 0; k < SHORT_WINDOW; k++) x = Math.imul(x, R)
  return x
})()
/** r kept for the last R_RING positions: back to p − 32 of an anchor seen 32 bytes ago. */
const R_RING = 128

/** 24 bits of two rolling values mixed (murmur3's finalizer steps); `tag` keeps kinds apart. */
export function windowIdentity(a: number, b: number, tag: number): number {
  let x = Math.imul(a ^ tag, 0x85ebca6b)
  x = Math.imul(x ^ (x >>> 15) ^ b, 0xc2b2ae35)
  x = Math.imul(x ^ (x >>> 13), 0x85ebca6b)
  return (x ^ (x >>> 16)) & 0xffffff
}

/** Consecutive anchors checked for a repeat of the same window (runs of zeros, short periods). */
const REPEAT_LOOKBACK = 4

/**
 * Anchors a sketch may hold after `bytes`: twice the expected count, so a level is left only when
 * the file outgrows it (at exactly the expected count, chance alone raised a 1 MiB file to
 * level 11: 493 anchors instead of 2048).
 */
function budget(bytes: number): number {
  return Math.min(MAX_ANCHORS, 2 * Math.max(MIN_ANCHORS, Math.ceil(bytes / 2 ** DENSE_LEVEL)))
}

/**
 * Builds a sketch from a file's bytes in pieces of any size (the same sketch for any split);
 * memory is bounded by MAX_ANCHORS. `update` then `finish` once.
 */
/** What to build: `windows` adds the exact windows of format 2 (slower: 1 MiB files 249 → 152
 *  MB/s per CPU second), needed only where two sketches are compared by their bytes — a sketch
 *  for a receiver of version 5, a receiver's sketch of its seed, `dsync similarity`. Probes,
 *  the index and `similar` queries keep format 1. */
export interface SketchOptions {
  readonly windows?: boolean
  /** Format 1's loop: the WebAssembly kernel (sketch-wasm.ts) where the runtime has it (the
   *  default), or the JS loop (tests run both; the sketch is the same). */
  readonly kernel?: 'wasm' | 'js'
}

export class SketchBuilder {
  readonly #exact: boolean
  /** Gear's loop and its state (h, ring, bytes fed): format 1 runs it, format 2 its own loop on the same state */
  readonly #gear: GearScan

  constructor(opts: SketchOptions = {}) {
    this.#exact = opts.windows === true
    const kernel = opts.kernel === 'js' || (this.#exact && opts.kernel === undefined) ? undefined : gearKernel()
    if (opts.kernel === 'wasm' && kernel === undefined) throw new Error('the WebAssembly sketch kernel is not available in this runtime')
    // Format 1: every byte is an anchor while the level is 0 (a run of one byte stays there,
    // each merged into the last), so JavaScript until it rises.
    this.#gear = new GearScan(kernel, () => maskOf(this.#level), () => this.#level === 0, (h, prior, place) => {
      this.#add(h, prior, place + 1, 0, 0)
    })
  }

  #level = 0
  #n = 0
  #short = new Uint32Array(1024)
  #prior = new Uint32Array(1024)
  #w32 = new Uint32Array(1024)
  #w64 = new Uint32Array(1024)
  #centred = new Uint32Array(1024)
  #count = new Uint32Array(1024)
  /** the last 32 bytes fed before the current `update` (zeros before the file's start): the
   *  bytes leaving r's window at its first positions */
  #carry = new Uint8Array(SHORT_WINDOW)
  #r = 0
  /** r of the last R_RING positions */
  readonly #rRing = new Int32Array(R_RING)
  /** per ring slot: 1 + the index of the anchor sampled there whose centred window is still to
   *  come (its slot comes round again 32 bytes later), or 0 */
  readonly #pending = new Int32Array(SHORT_WINDOW)
  /** slots of #pending that are not 0 */
  #waitingCount = 0
  #head = new Uint8Array(LONG_WINDOW)

  /** Feeds the next bytes of the file. `data` is not kept. */
  update(data: Uint8Array): void {
    const fed = this.#gear.pos
    if (fed < LONG_WINDOW) this.#head.set(data.subarray(0, LONG_WINDOW - fed), fed)
    // One loop per format: a per-byte test of the format cost format 1 a tenth of its speed.
    if (this.#exact) this.#feedExact(data)
    else this.#gear.feed(data)
  }

  /** Format 2: Gear's h, and r for the exact windows. */
  #feedExact(data: Uint8Array): void {
    const gear = this.#gear
    const ring = gear.ring
    let h = gear.h
    let pos = gear.pos
    let mask = maskOf(this.#level)
    const pending = this.#pending
    // Anchors waiting: 0 for most bytes (an anchor waits 32 bytes, one comes every ~512), so
    // the slot is read only then. 64 MiB, MB/s per CPU second (by hand, median of 5): Gear's h
    // alone 263; with h(p + 32) read from the slot every byte 215, so 235 (a queue of waiting
    // anchors checked every byte: 140).
    let waiting = this.#waitingCount
    let r = this.#r
    const rRing = this.#rRing
    const carry = this.#carry
    for (let i = 0; i < data.length; i++, pos++) {
      h = ((h << 1) + GEAR[data[i]!]!) | 0
      r = (Math.imul(r, R) + data[i]! - Math.imul(i >= SHORT_WINDOW ? data[i - SHORT_WINDOW]! : carry[i]!, R32)) | 0
      rRing[pos & (R_RING - 1)] = r
      const slot = pos & (SHORT_WINDOW - 1)
      const prior = ring[slot]!
      ring[slot] = h
      // The anchor sampled 32 bytes back in this slot, if any, now has its centred window.
      if (waiting !== 0 && pending[slot] !== 0) {
        this.#centred[pending[slot]! - 1] = windowIdentity(rRing[(pos - SHORT_WINDOW) & (R_RING - 1)]!, r, 0xc3)
        pending[slot] = 0
        waiting--
      }
      if ((h & mask) === 0 && pos >= LONG_WINDOW - 1) {
        this.#waitingCount = waiting
        const k = this.#add(h >>> 0, prior & PRIOR_MASK, pos + 1, r, rRing[(pos - SHORT_WINDOW) & (R_RING - 1)]!)
        waiting = this.#waitingCount
        if (k >= 0) {
          pending[slot] = k + 1
          waiting++
        }
        mask = maskOf(this.#level)
      }
    }
    this.#waitingCount = waiting
    gear.h = h
    this.#r = r
    gear.pos = pos
    // The last 32 bytes fed: those leaving r's window at the next `update`'s first positions.
    if (data.length >= SHORT_WINDOW) this.#carry = data.slice(data.length - SHORT_WINDOW)
    else if (data.length > 0) {
      const next = new Uint8Array(SHORT_WINDOW)
      next.set(carry.subarray(data.length))
      next.set(data, SHORT_WINDOW - data.length)
      this.#carry = next
    }
  }

  /** Adds an anchor seen after `seen` bytes of the file, with r there and 32 bytes before (format
   *  2); returns its index, or −1 when it was merged into an earlier one (a repeat) or dropped by
   *  a raise of the level. */
  #add(short: number, prior: number, seen: number, r: number, rBefore: number): number {
    const w64 = this.#exact ? windowIdentity(rBefore, r, 0x64) : 0
    // A window repeated within a few anchors (zeros, a short period) is one anchor that counts
    // for all its positions: sif's "no overlapping fingerprints", keeping the weight. With the
    // exact windows, only when its 64 bytes are the same too (Gear's short and prior cover 56:
    // the first anchor of a run, whose window reaches before it, took the run's count).
    for (let k = this.#n - 1; k >= 0 && k >= this.#n - REPEAT_LOOKBACK; k--) {
      if (this.#short[k] === short && this.#prior[k] === prior && (!this.#exact || this.#w64[k] === w64)) {
        this.#count[k]!++
        return -1
      }
    }
    if (this.#n === this.#short.length) this.#grow()
    this.#short[this.#n] = short
    this.#prior[this.#n] = prior
    if (this.#exact) {
      this.#w32[this.#n] = windowIdentity(r, 0, 0x32)
      this.#w64[this.#n] = w64
    }
    this.#centred[this.#n] = NO_AHEAD
    this.#count[this.#n] = 1
    const k = this.#n++
    if (this.#n <= budget(seen)) return k
    this.#raise()
    // It was the last; kept at the new level, it still is.
    return Math.clz32(short) >= this.#level ? this.#n - 1 : -1
  }

  #grow(): void {
    const size = Math.min(2 * this.#short.length, MAX_ANCHORS + 1)
    const larger = (a: Uint32Array): Uint32Array<ArrayBuffer> => {
      const next = new Uint32Array(size)
      next.set(a)
      return next
    }
    this.#short = larger(this.#short)
    this.#prior = larger(this.#prior)
    this.#w32 = larger(this.#w32)
    this.#w64 = larger(this.#w64)
    this.#centred = larger(this.#centred)
    this.#count = larger(this.#count)
  }

  /** One level up: keeps the anchors whose h has one more leading zero (about half). */
  #raise(): void {
    this.#level++
    let m = 0
    const moved = new Int32Array(this.#n).fill(-1)
    for (let k = 0; k < this.#n; k++) {
      if (Math.clz32(this.#short[k]!) < this.#level) continue
      this.#short[m] = this.#short[k]!
      this.#prior[m] = this.#prior[k]!
      this.#w32[m] = this.#w32[k]!
      this.#w64[m] = this.#w64[k]!
      this.#centred[m] = this.#centred[k]!
      this.#count[m] = this.#count[k]!
      moved[k] = m
      m++
    }
    this.#n = m
    // Anchors still waiting for their h(p + 32): renumbered, or forgotten with their anchor.
    this.#waitingCount = 0
    for (let slot = 0; slot < SHORT_WINDOW; slot++) {
      if (this.#pending[slot] === 0) continue
      this.#pending[slot] = moved[this.#pending[slot]! - 1]! + 1
      if (this.#pending[slot] !== 0) this.#waitingCount++
    }
  }

  /** The sketch of everything fed so far. */
  finish(): Sketch {
    const n = this.#n
    return {
      size: this.#gear.pos,
      level: this.#level,
      short: this.#short.slice(0, n),
      prior: this.#prior.slice(0, n),
      ...(this.#exact && { windows: { w32: this.#w32.slice(0, n), w64: this.#w64.slice(0, n), centred: this.#centred.slice(0, n) } }),
      count: this.#count.slice(0, n),
      tiny: this.#gear.pos < LONG_WINDOW ? this.#head.slice(0, this.#gear.pos) : new Uint8Array(0),
    }
  }
}

/** The sketch of bytes in memory. */
export function sketchBytes(data: Uint8Array, opts: SketchOptions = {}): Sketch {
  const b = new SketchBuilder(opts)
  b.update(data)
  return b.finish()
}

/** The sketch of a byte stream (a file source), in bounded memory. */
export async function sketchStream(source: AsyncIterable<Uint8Array>, opts: SketchOptions = {}): Promise<Sketch> {
  const b = new SketchBuilder(opts)
  for await (const piece of source) b.update(piece)
  return b.finish()
}

/** The anchors of `s` at a coarser `level` (≥ s.level): a sketch as if sampled there. */
export function atLevel(s: Sketch, level: number): Sketch {
  if (level <= s.level) return s
  const keep: number[] = []
  for (let k = 0; k < s.short.length; k++) if (Math.clz32(s.short[k]!) >= level) keep.push(k)
  const pick = (a: Uint32Array): Uint32Array => Uint32Array.from(keep, (k) => a[k]!)
  const cut = { size: s.size, level, short: pick(s.short), prior: pick(s.prior), count: pick(s.count), tiny: s.tiny }
  const w = s.windows
  return w === undefined ? cut : { ...cut, windows: { w32: pick(w.w32), w64: pick(w.w64), centred: pick(w.centred) } }
}
