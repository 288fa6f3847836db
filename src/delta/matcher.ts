import { BlockIndex } from './block-index.js'
import { blockHasher, type BlockHasher, type HashKernelKind, type SearchTables } from './hash-kernel.js'
import type { Signature } from './signature.js'

/** The target window grows to this: compaction (copying < 2 blocks) is rare at 4 MiB. */
export const MAX_WINDOW = 4 * 1024 * 1024

/** The first window for a target of about `size` bytes (a hint; unknown: 64 KiB, grown to
 *  MAX_WINDOW if the target is larger). A 256 KiB target grew to a 4 MiB window (zeroed, then
 *  collected): 40 such files were ~60 ms of a push's garbage collection. */
export function windowFor(size: number | undefined): number {
  return size === undefined || !Number.isFinite(size) ? 64 * 1024 : Math.min(MAX_WINDOW, Math.max(4096, size))
}

/** Most blocks tried for one weak key at one offset. A seed with many identical blocks (runs of
 *  zeros) would otherwise make a miss cost one strong hash per copy (rsync match.c has the same
 *  cap, MAX_CHAIN_LEN, for the same reason). Identical blocks all serve equally: the first wins. */
const MAX_CANDIDATES = 16

/** Where the matcher's decisions go: DeltaWriter (a delta), or MatchRecorder (round 1 of a
 *  refined delta: the copies only, match-list.ts). */
export interface OpSink {
  /** The next target bytes equal seed bytes [offset, offset+length). */
  copy(offset: number, length: number): void
  /** The next target bytes match no block; `bytes` may be reused after the call, unless
   *  `owned`: then they are the sink's to keep (the caller never writes them again). */
  literal(bytes: Uint8Array, owned?: boolean): void
}

/**
 * The matching state machine over a sliding buffer of the target (the rules: encodeDelta).
 * push() the target in pieces of any size, then end(); every target byte reaches the sink once,
 * in order, as a copy or a literal.
 */
export class Matcher {
  readonly #sig: Signature
  readonly #w: OpSink
  readonly #index: BlockIndex
  readonly #b: number
  readonly #count: number
  /** The buffered target and its keys (hash-kernel.ts); undefined when the seed is empty. */
  #hasher: BlockHasher | undefined
  readonly #tables: SearchTables
  readonly #kernel: HashKernelKind | undefined
  #buf: Uint8Array
  #end = 0 // bytes buffered
  #p = 0 // window start
  #lit = 0 // start of the pending literal
  #expect: number // block expected at p (continuing a run), or -1
  /** Where the run predicts its next-but-one block after a failed continuation (one edited
   *  block in between), and that block; -1 when there is no such prediction. */
  #predAt = -1
  #predBlock = -1
  #h = 0 // rolling hash of [p, p+b) when #hValid
  #hValid = false

  /** `firstWindow`: the buffer's first size in bytes (it grows to 4 MiB as needed); a
   *  refinement round runs one matcher per hole and starts it at the hole's size. `kernel`
   *  forces the hash kernel's implementation (tests). */
  constructor(sig: Signature, writer: OpSink, firstWindow = 64 * 1024, kernel?: HashKernelKind) {
    this.#sig = sig
    this.#w = writer
    this.#b = sig.blockSize
    this.#count = sig.weak.length
    this.#index = new BlockIndex(sig)
    // Every target starts as if continuing a run at block 0: most files keep their beginning.
    this.#expect = this.#count > 0 ? 0 : -1
    this.#tables = { blockSize: this.#b, filter: this.#index.filter, filterShift: 32 - sig.weakBits + this.#index.filterShift }
    this.#kernel = kernel
    if (this.#count > 0) {
      // Starts small and grows to MAX_WINDOW: most targets are small files.
      this.#hasher = this.#newHasher(Math.max(firstWindow, 4 * this.#b))
      this.#buf = this.#hasher.bytes
    } else {
      this.#buf = new Uint8Array(0)
    }
  }

  /** A window of `size` bytes, in the kernel where the runtime has it (`kernel` forces one). A
   *  matcher per small file or refinement hole used the JS loops below 256 KiB while each new
   *  kernel instance reserved a new memory (~70 µs made in a loop, far more made and dropped by
   *  the hundred); released at end() they are reused (hash-wasm.ts), and the kernel's ~2× pays
   *  at any size. */
  #newHasher(size: number): BlockHasher {
    return blockHasher(size, this.#tables, this.#kernel)
  }

  /** `owned`: `input` is never written again by the caller (see OpSink.literal). */
  push(input: Uint8Array, owned = false): void {
    if (this.#count === 0) {
      this.#w.literal(input, owned)
      return
    }
    let taken = 0
    while (taken < input.length) {
      if (this.#end === this.#buf.length) {
        if (this.#buf.length < Math.max(MAX_WINDOW, 4 * this.#b)) {
          const smaller = this.#hasher!
          this.#hasher = this.#newHasher(Math.max(MAX_WINDOW, 4 * this.#b))
          this.#hasher.bytes.set(this.#buf.subarray(0, this.#end))
          this.#buf = this.#hasher.bytes
          smaller.release()
        } else this.#compact()
      }
      const n = Math.min(input.length - taken, this.#buf.length - this.#end)
      this.#buf.set(input.subarray(taken, taken + n), this.#end)
      this.#end += n
      taken += n
      this.#scan(false)
    }
  }

  /** The target's end: the last ops go to the sink, and the window is released (no call after). */
  end(): void {
    if (this.#count === 0) return
    this.#scan(true)
    this.#literalTo(this.#end)
    this.release()
  }

  /** Lets go of the window (its kernel instance serves the next matcher) with no more ops: after
   *  end(), or instead of it when the target is given up (an abort, a failed read). */
  release(): void {
    this.#hasher?.release()
    this.#hasher = undefined
    this.#buf = new Uint8Array(0)
  }

  /** Moves what is still needed (from p on; the literal before it goes to the writer first) to
   *  the front of the buffer. The scan leaves fewer than 2 blocks after p, so this frees room. */
  #compact(): void {
    this.#literalTo(this.#p)
    this.#buf.copyWithin(0, this.#p, this.#end)
    this.#end -= this.#p
    this.#lit -= this.#p
    this.#predAt = this.#predAt >= this.#p ? this.#predAt - this.#p : -1
    this.#p = 0
  }

  #literalTo(pos: number): void {
    if (pos > this.#lit) this.#w.literal(this.#buf.subarray(this.#lit, pos))
    this.#lit = pos
  }

  #blockLen(k: number): number {
    return k === this.#count - 1 ? this.#sig.seedSize - k * this.#b : this.#b
  }

  /** The top strongBits of the block hash of target [at, at+len) (signature.ts strongKey). */
  #strongKey(at: number, len: number): number {
    return this.#hasher!.strong(at, len) >>> (32 - this.#sig.strongBits)
  }

  /** Does target [at, at+len) carry block k's keys? Both keys in one pass (hash-kernel.ts keys):
   *  a block compared here is block k nearly always (a run goes on, or the search's second block
   *  confirms a first). */
  #isBlock(k: number, at: number, len: number): boolean {
    const s = this.#sig
    const hasher = this.#hasher!
    return hasher.keys(at, len) >>> (32 - s.weakBits) === s.weak[k] && hasher.lastStrong >>> (32 - s.strongBits) === s.strong[k]
  }

  #take(k: number): void {
    const len = this.#blockLen(k)
    this.#literalTo(this.#p)
    this.#w.copy(k * this.#b, len)
    this.#p += len
    this.#lit = this.#p
    this.#expect = k + 1 < this.#count ? k + 1 : -1
    this.#predAt = -1
    this.#hValid = false
  }

  /**
   * Matches as far as the buffered bytes allow: while more input may come, keeps 2 blocks of
   * look-ahead (a window and the block that confirms it); at the end (`final`), to the last byte.
   */
  #scan(final: boolean): void {
    const b = this.#b
    const s = this.#sig
    const hasher = this.#hasher!
    const shift = 32 - s.weakBits
    for (;;) {
      const end = this.#end
      const p = this.#p
      if (!final && end - p < 2 * b) return
      if (p >= end) return
      if (this.#expect >= 0) {
        const k = this.#expect
        const len = this.#blockLen(k)
        if (end - p >= len) {
          const h = hasher.keys(p, len)
          if (h >>> shift === s.weak[k] && hasher.lastStrong >>> (32 - s.strongBits) === s.strong[k]) {
            this.#take(k)
            continue
          }
          if (len === b) {
            this.#h = h
            this.#hValid = true
            // The block after k, at p + b, is where the run goes on if only block k was
            // edited (an overwrite): the search may take it there on its own keys, unconfirmed.
            // It saves the block lost when the confirming block is edited too, or past the end.
            // 50 MiB random, 7232-byte blocks: 100 × 64 B overwrites delta 738 608 → 731 382 B,
            // 1000 × 64 B 7 607 479 → 6 986 070 B (-8%); 512-byte blocks, 1000 × 64 B
            // 594 335 → 590 303 B. CPU unchanged (the check replaces a confirming one).
            if (k + 1 < this.#count && this.#blockLen(k + 1) === b) {
              this.#predAt = p + b
              this.#predBlock = k + 1
            }
          }
        }
        this.#expect = -1
      }
      if (end - p < b) {
        this.#tail()
        return
      }
      if (!this.#hValid) {
        this.#h = hasher.rolling(p, b)
        this.#hValid = true
      }
      // Roll until the weak key passes the bitmap, or the look-ahead runs out. The bitmap is
      // indexed by the hash's top bits as they are (the weak key is those bits, weakKey) and the
      // byte leaving is one lookup in outG: one multiply per byte, where version 2 ran fmix32
      // (2 more) and rollHash (1 more). 20 MiB unrelated random target, encodeDelta CPU over 9
      // interleaved runs (load ~4.3 on 2 cores): min 608 → 441 ms, median 813 → 683 ms (JS
      // loop; the kernel's loop is ~3× faster again, hash-kernel.ts).
      const last = final ? end - b : end - 2 * b // last window start this scan may test
      const q = hasher.search(p, last, this.#h)
      const h = hasher.hash
      this.#p = q
      this.#h = h
      const weak = h >>> shift
      if (q === this.#predAt && weak === s.weak[this.#predBlock] && this.#strongKey(q, b) === s.strong[this.#predBlock]) {
        this.#take(this.#predBlock)
        continue
      }
      const k = this.#searchAt(q, weak)
      if (k >= 0) {
        this.#take(k)
        this.#take(k + 1)
        continue
      }
      if (q >= last) {
        if (final) {
          this.#tail()
          return
        }
        if (q + b < end) {
          this.#h = hasher.roll(q, h)
          this.#p = q + 1
        }
        return
      }
      this.#h = hasher.roll(q, h)
      this.#p = q + 1
    }
  }

  /** A block whose weak key is `weak` and whose strong key matches at q, confirmed by the next
   *  block matching right after it; -1 if none. */
  #searchAt(q: number, weak: number): number {
    if (!this.#index.mayHave(weak)) return -1
    const b = this.#b
    const s = this.#sig
    let strong = -1
    return this.#index.find(weak, MAX_CANDIDATES, (k) => {
      if (k + 1 >= this.#count) return false
      if (strong < 0) strong = this.#strongKey(q, b)
      if (strong !== s.strong[k]) return false
      const len2 = this.#blockLen(k + 1)
      // Near the target's end there may be no room for the confirming block: no match then.
      if (q + b + len2 > this.#end) return false
      return this.#isBlock(k + 1, q + b, len2)
    })
  }

  /** At the target's end, with no match at p: the last bytes may still be the seed's last block
   *  (compared at exactly one offset, so no confirmation is needed). */
  #tail(): void {
    const last = this.#count - 1
    const len = this.#blockLen(last)
    const at = this.#end - len
    if (at >= this.#p && this.#isBlock(last, at, len)) {
      this.#p = at
      this.#take(last)
    }
    this.#p = this.#end
  }
}
