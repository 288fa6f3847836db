import { GEAR } from '../chunk/index.js'

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

/** Per anchor, 24-bit hashes of its windows' bytes (windowHash). */
export interface AnchorWindows {
  /** the 32 bytes ending at p */
  readonly w32: Uint32Array
  /** the 64 bytes ending at p */
  readonly w64: Uint32Array
  /** the 64 bytes centred on p (p − 31 to p + 32), or NONE_YET in the file's last 32 bytes */
  readonly centred: Uint32Array
}

/** Bytes of the short window (Gear's reach in a 32-bit hash). */
export const SHORT_WINDOW = 32
/** Bytes of the long window: the truth's minimum shared substring (issue 10). */
export const LONG_WINDOW = 64

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

/** Bits of h(p − 32) kept: the long key uses 21 (sketch-estimate.ts); 3 bytes on the wire. */
const PRIOR_MASK = 0xffffff

/** `centred` of an anchor with no 32 bytes after it (the file ends first): matches nothing. */
export const NO_AHEAD = 0xffffffff

/** Bytes of the input kept from one `update` to the next for the windows' hashes: a centred
 *  window ends 32 bytes after its anchor and starts 63 before that position. */
const CARRY = LONG_WINDOW

/**
 * FNV-1a over the `n` bytes ending at `end`, an index into `data` (negative: into `carry`, the
 * bytes before `data`), folded to 24 bits. Hashed where an anchor is found, not kept per byte:
 * storing every byte in a ring for it cost a quarter of the sketch's speed.
 */
function windowHash(data: Uint8Array, carry: Uint8Array, end: number, n: number): number {
  let x = 0x811c9dc5
  const from = end - n + 1
  if (from >= 0) {
    for (let q = from; q <= end; q++) x = Math.imul(x ^ data[q]!, 0x01000193)
  } else {
    for (let q = from; q <= end; q++) x = Math.imul(x ^ (q < 0 ? carry[CARRY + q]! : data[q]!), 0x01000193)
  }
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
export class SketchBuilder {
  #level = 0
  #n = 0
  #short = new Uint32Array(1024)
  #prior = new Uint32Array(1024)
  #w32 = new Uint32Array(1024)
  #w64 = new Uint32Array(1024)
  #centred = new Uint32Array(1024)
  #count = new Uint32Array(1024)
  /** the last CARRY bytes fed before the current `update` (zeros before the file's start) */
  #carry = new Uint8Array(CARRY)
  /** per ring slot: 1 + the index of the anchor sampled there whose centred window is still to
   *  come (its slot comes round again 32 bytes later), or 0 */
  readonly #pending = new Int32Array(SHORT_WINDOW)
  /** slots of #pending that are not 0 */
  #waitingCount = 0
  readonly #ring = new Int32Array(SHORT_WINDOW)
  #h = 0
  #pos = 0
  #head = new Uint8Array(LONG_WINDOW)

  /** Feeds the next bytes of the file. `data` is not kept. */
  update(data: Uint8Array): void {
    if (this.#pos < LONG_WINDOW) this.#head.set(data.subarray(0, LONG_WINDOW - this.#pos), this.#pos)
    const ring = this.#ring
    let h = this.#h
    let pos = this.#pos
    let mask = this.#level === 0 ? 0 : (-1 << (32 - this.#level)) | 0
    const pending = this.#pending
    // Anchors waiting: 0 for most bytes (an anchor waits 32 bytes, one comes every ~512), so
    // the slot is read only then. 64 MiB, MB/s per CPU second (by hand, median of 5): format 1
    // alone 263; with h(p + 32) read from the slot every byte 215, so 235 (a queue of waiting
    // anchors checked every byte: 140); with the exact windows' hashes ~208.
    let waiting = this.#waitingCount
    for (let i = 0; i < data.length; i++, pos++) {
      h = ((h << 1) + GEAR[data[i]!]!) | 0
      const slot = pos & (SHORT_WINDOW - 1)
      const prior = ring[slot]!
      ring[slot] = h
      // The anchor sampled 32 bytes back in this slot, if any, now has its centred window.
      if (waiting !== 0 && pending[slot] !== 0) {
        this.#centre(pending[slot]! - 1, data, i)
        pending[slot] = 0
        waiting--
      }
      if ((h & mask) === 0 && pos >= LONG_WINDOW - 1) {
        this.#waitingCount = waiting
        const k = this.#add(h >>> 0, prior & PRIOR_MASK, pos + 1, data, i)
        waiting = this.#waitingCount
        if (k >= 0) {
          pending[slot] = k + 1
          waiting++
        }
        mask = this.#level === 0 ? 0 : (-1 << (32 - this.#level)) | 0
      }
    }
    this.#waitingCount = waiting
    this.#h = h
    this.#pos = pos
    // The last CARRY bytes fed, for windows that reach back into the next `update`'s data.
    if (data.length >= CARRY) this.#carry = data.slice(data.length - CARRY)
    else if (data.length > 0) {
      const next = new Uint8Array(CARRY)
      next.set(this.#carry.subarray(data.length))
      next.set(data, CARRY - data.length)
      this.#carry = next
    }
  }

  /** Adds an anchor seen after `seen` bytes of the file; returns its index, or −1 when it was
   *  merged into an earlier one (a repeat) or dropped by a raise of the level. */
  /** The centred window of anchor `k`, which ends at `data[end]`. Out of the byte loop, as the
   *  other windows' hashes: inlined there, they cost the loop a fifth of its speed. */
  #centre(k: number, data: Uint8Array, end: number): void {
    this.#centred[k] = windowHash(data, this.#carry, end, LONG_WINDOW)
  }

  /** Adds the anchor at `data[at]`, seen after `seen` bytes of the file; returns its index, or
   *  −1 when it was merged into an earlier one (a repeat) or dropped by a raise of the level. */
  #add(short: number, prior: number, seen: number, data: Uint8Array, at: number): number {
    // A window repeated within a few anchors (zeros, a short period) is one anchor that counts
    // for all its positions: sif's "no overlapping fingerprints", keeping the weight.
    for (let k = this.#n - 1; k >= 0 && k >= this.#n - REPEAT_LOOKBACK; k--) {
      if (this.#short[k] === short && this.#prior[k] === prior) {
        this.#count[k]!++
        return -1
      }
    }
    if (this.#n === this.#short.length) this.#grow()
    this.#short[this.#n] = short
    this.#prior[this.#n] = prior
    this.#w32[this.#n] = windowHash(data, this.#carry, at, SHORT_WINDOW)
    this.#w64[this.#n] = windowHash(data, this.#carry, at, LONG_WINDOW)
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
      size: this.#pos,
      level: this.#level,
      short: this.#short.slice(0, n),
      prior: this.#prior.slice(0, n),
      windows: { w32: this.#w32.slice(0, n), w64: this.#w64.slice(0, n), centred: this.#centred.slice(0, n) },
      count: this.#count.slice(0, n),
      tiny: this.#pos < LONG_WINDOW ? this.#head.slice(0, this.#pos) : new Uint8Array(0),
    }
  }
}

/** The sketch of bytes in memory. */
export function sketchBytes(data: Uint8Array): Sketch {
  const b = new SketchBuilder()
  b.update(data)
  return b.finish()
}

/** The sketch of a byte stream (a file source), in bounded memory. */
export async function sketchStream(source: AsyncIterable<Uint8Array>): Promise<Sketch> {
  const b = new SketchBuilder()
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
