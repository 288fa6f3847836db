import { blockHash } from './block-hash.js'
import { wasmHasher, wasmKernelAvailable } from './hash-wasm.js'
import { BYTE_MAP, ROLL_BASE, outTableFor, rollingHash, rollWith } from './rolling-hash.js'

/**
 * Block keys over a window of bytes, and the matcher's byte-by-byte search: the delta engine's
 * hot loops, in a WebAssembly kernel (hash-wasm.ts) where the runtime has it, else in
 * JavaScript (rolling-hash.ts, block-hash.ts: the definitions; test/delta/hash-kernel.ts checks
 * both agree). The receiver keys every block of its seed and the sender every block a run of
 * copies goes through, then rolls byte by byte between runs: in JavaScript, the signature and
 * the search were 130 and 200 ms of a 50 MiB file with 100 overwrites (1.6 and 3 s of 1 GiB).
 * Figures of the kernel against the JS loops: bench/README.md "Delta".
 */

/** Which implementation a hasher uses. */
export type HashKernelKind = 'wasm' | 'js'

/** Whether this runtime has the WebAssembly kernel (else every hasher runs the JS loops). */
export function hashKernelAvailable(): boolean {
  return wasmKernelAvailable()
}

/** What `search` needs of a signature's block index (block-index.ts). */
export interface SearchTables {
  readonly blockSize: number
  /** The prefilter bitmap, and the shift from a raw hash to its bit index. */
  readonly filter: Uint8Array
  readonly filterShift: number
}

/**
 * A window of bytes and the block keys of any range of it. The caller writes its bytes into
 * `bytes` (a view of the kernel's memory: no copy on the hot path), then asks for keys.
 */
export interface BlockHasher {
  /** The window. `grow` replaces it with a larger one holding the same bytes. */
  readonly bytes: Uint8Array
  grow(size: number): void
  /** rollingHash(bytes, at, len): signed 32-bit. */
  rolling(at: number, len: number): number
  /** blockHash(bytes, at, len): unsigned 32-bit. */
  strong(at: number, len: number): number
  /** Both keys of [at, at+len) in one pass: returns rolling(at, len); strong(at, len) is then
   *  `lastStrong`. */
  keys(at: number, len: number): number
  readonly lastStrong: number
  /**
   * Rolls a blockSize window starting at q with rolling hash h one byte at a time until the
   * prefilter may hold its key or q reaches `last`; returns that q. Its hash is then `hash`.
   * Needs the SearchTables given at creation.
   */
  search(q: number, last: number, h: number): number
  readonly hash: number
  /** One step of the same roll: the hash of the window at q + 1, given h at q. */
  roll(q: number, h: number): number
  /** Done with it: its window and keys are no longer used (a kernel instance is then kept for
   *  the next hasher). Optional to call: one never released is collected. */
  release(): void
}

/** A hasher over a window of `size` bytes; with `tables`, it can also search. */
export function blockHasher(size: number, tables?: SearchTables, kind?: HashKernelKind): BlockHasher {
  if (kind === 'js') return new JsHasher(size, tables)
  let hasher: BlockHasher | undefined
  try {
    hasher = wasmHasher(size, tables)
  } catch (err) {
    // A WebAssembly memory reserves address space (GiBs on 64-bit V8): where none is left (a
    // `ulimit -v`, many live matchers) instantiation throws a RangeError. The JS loops need none.
    if (kind === 'wasm' || !(err instanceof RangeError)) throw err
  }
  if (hasher !== undefined) return hasher
  if (kind === 'wasm') throw new Error('the WebAssembly hash kernel is not available in this runtime')
  return new JsHasher(size, tables)
}

/** The same contract in JavaScript: rolling-hash.ts and block-hash.ts, and the roll loop. */
class JsHasher implements BlockHasher {
  bytes: Uint8Array
  hash = 0
  lastStrong = 0
  readonly #tables: SearchTables | undefined
  readonly #outG: Int32Array

  constructor(size: number, tables: SearchTables | undefined) {
    this.bytes = new Uint8Array(size)
    this.#tables = tables
    this.#outG = outTableFor(Math.max(1, tables?.blockSize ?? 1))
  }

  grow(size: number): void {
    if (size <= this.bytes.length) return
    const bigger = new Uint8Array(size)
    bigger.set(this.bytes)
    this.bytes = bigger
  }

  rolling(at: number, len: number): number {
    return rollingHash(this.bytes, at, len)
  }

  strong(at: number, len: number): number {
    return blockHash(this.bytes, at, len)
  }

  keys(at: number, len: number): number {
    this.lastStrong = blockHash(this.bytes, at, len)
    return rollingHash(this.bytes, at, len)
  }

  search(q: number, last: number, h: number): number {
    const t = this.#tables!
    const buf = this.bytes
    const b = t.blockSize
    const filter = t.filter
    const fshift = t.filterShift
    const g = BYTE_MAP
    const outG = this.#outG
    for (;;) {
      const f = h >>> fshift
      if ((filter[f >>> 3]! & (1 << (f & 7))) !== 0 || q >= last) break
      // rollWith, inlined: this loop is the JS search's whole cost.
      h = (Math.imul((h - outG[buf[q]!]!) | 0, ROLL_BASE) + g[buf[q + b]!]!) | 0
      q++
    }
    this.hash = h
    return q
  }

  roll(q: number, h: number): number {
    return rollWith(this.#outG, h, this.bytes[q]!, this.bytes[q + (this.#tables?.blockSize ?? 1)]!)
  }

  release(): void {}
}

/** Window of the shared hasher keyBlocks copies through (grown for larger blocks). */
const SHARED_WINDOW = 1 << 20
let shared: BlockHasher | undefined

/**
 * Keys `data` cut into `blockSize` blocks (the last may be shorter): onBlock(rolling hash,
 * block hash) for each, in order. Synchronous, so one hasher serves every caller: the data is
 * copied through its window (memcpy speed, against ~1–2 GB/s of hashing).
 */
export function keyBlocks(data: Uint8Array, blockSize: number, onBlock: (rolling: number, strong: number) => void, kind?: HashKernelKind): void {
  const hasher = kind === undefined ? (shared ??= blockHasher(SHARED_WINDOW)) : blockHasher(blockSize, undefined, kind)
  const per = Math.max(1, Math.floor(Math.max(hasher.bytes.length, blockSize) / blockSize)) * blockSize
  hasher.grow(per)
  for (let at = 0; at < data.length; at += per) {
    const n = Math.min(per, data.length - at)
    hasher.bytes.set(data.subarray(at, at + n))
    for (let k = 0; k < n; k += blockSize) {
      const len = Math.min(blockSize, n - k)
      const rolling = hasher.keys(k, len)
      onBlock(rolling, hasher.lastStrong)
    }
  }
}
