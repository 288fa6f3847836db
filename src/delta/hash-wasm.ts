import { assembleModule, compileModule, get, i32, instantiate, loopUntil, OP, set, tee, VOID_BLOCK, WASM_PAGE, uleb, type WasmMemory } from '../wasm-asm.js'
import { BLOCK_HASH_SEED } from './block-hash.js'
import type { BlockHasher, SearchTables } from './hash-kernel.js'
import { BYTE_MAP, ROLL_BASE, outTableFor, rollWith } from './rolling-hash.js'

/**
 * The delta engine's hot loops, block keys and the byte-by-byte search, as a WebAssembly kernel
 * behind hash-kernel.ts's BlockHasher (the same definitions as rolling-hash.ts and block-hash.ts,
 * which stay the reference and the fallback where WebAssembly is missing;
 * test/delta/hash-kernel.ts checks both agree).
 *
 * Why: the receiver keys every block of its seed (rolling hash + MurmurHash3) and the sender
 * keys every block a run of copies goes through, then rolls byte by byte between runs; in
 * JavaScript these were the two passes that made a large file's delta slower than rsync's
 * (signature 130 ms and search 200 ms of a 50 MiB file with 100 overwrites; 1.6 s and 3 s of
 * 1 GiB). Figures for the kernel against the JS loops: bench/README.md "Delta".
 *
 * Memory layout of an instance:
 *   [0, 1024)        BYTE_MAP (G), 256 × i32
 *   [1024, 2048)     G[x] · B^(b−1) per byte value (outTable) for the search's block size
 *   [2048, 2052)     the rolling hash `search` stopped at
 *   [2052, 2056)     the block hash `keys` computed
 *   [4096, …)        the block index's prefilter bitmap (the search's only)
 *   [dataAddr, …)    the window: the caller's bytes, written in place through `bytes`
 */
const G_ADDR = 0
const OUT_G_ADDR = 1024
const HASH_ADDR = 2048
const STRONG_ADDR = 2052
const FILTER_ADDR = 4096

const B = ROLL_BASE
const B2 = Math.imul(B, B)
const B3 = Math.imul(B2, B)
const B4 = Math.imul(B3, B)

/** memarg (alignment exponent, offset) of each load the kernel makes. */
const byteAt = (offset: number): number[] => [OP.i32Load8U, 0, ...uleb(offset)]
const wordAt = (offset: number): number[] => [OP.i32Load, 0, ...uleb(offset)]
const tableAt = (offset: number): number[] => [OP.i32Load, 2, ...uleb(offset)]
/** G[byte at local `p` + k]: the byte map's value for one byte. */
const gOf = (p: number, k: number): number[] => [...get(p), ...byteAt(k), ...i32(2), OP.i32Shl, ...tableAt(G_ADDR)]

/** p += n */
const advance = (p: number, n: number): number[] => [...get(p), ...i32(n), OP.i32Add, ...set(p)]
/** local `to` = p + len, rounded down to whole words when `words` */
const endOf = (p: number, len: number, to: number, words: boolean): number[] =>
  [...get(p), ...get(len), ...(words ? [...i32(-4), OP.i32And] : []), OP.i32Add, ...set(to)]

/** The rolling hash over the 4 bytes at p, as the JS loop: r·B^4 + (g0·B^3 + g1·B^2 + g2·B + g3). */
const rollWord = (p: number, r: number): number[] => [
  ...get(r), ...i32(B4), OP.i32Mul,
  ...gOf(p, 0), ...i32(B3), OP.i32Mul, OP.i32Add,
  ...gOf(p, 1), ...i32(B2), OP.i32Mul, OP.i32Add,
  ...gOf(p, 2), ...i32(B), OP.i32Mul, OP.i32Add,
  ...gOf(p, 3), OP.i32Add,
  ...set(r),
]
/** The rolling hash over the byte at p: r·B + g0. */
const rollByte = (p: number, r: number): number[] => [...get(r), ...i32(B), OP.i32Mul, ...gOf(p, 0), OP.i32Add, ...set(r)]

/** MurmurHash3 x86_32 (block-hash.ts) in pieces: C1, C2, and k = rotl(k · C1, 15) · C2 on the
 *  value on the stack. */
const C1 = 0xcc9e2d51 | 0
const C2 = 0x1b873593 | 0
const scramble: number[] = [...i32(C1), OP.i32Mul, ...i32(15), OP.i32Rotl, ...i32(C2), OP.i32Mul]
/** The little-endian word at p mixed into h (an unaligned load). */
const murmurWord = (p: number, h: number): number[] => [
  ...get(p), ...wordAt(0), ...scramble,
  ...get(h), OP.i32Xor, ...i32(13), OP.i32Rotl, ...i32(5), OP.i32Mul, ...i32(0xe6546b64 | 0), OP.i32Add, ...set(h),
]
/** The 0–3 bytes at p that end the input (len & 3 of them), as the reference's tail. */
const murmurTail = (p: number, len: number, h: number, k: number, rest: number): number[] => [
  ...get(len), ...i32(3), OP.i32And, ...tee(rest),
  OP.if, VOID_BLOCK,
  ...get(p), ...byteAt(0), ...set(k),
  ...get(rest), ...i32(1), OP.i32GtU,
  OP.if, VOID_BLOCK, ...get(k), ...get(p), ...byteAt(1), ...i32(8), OP.i32Shl, OP.i32Or, ...set(k), OP.end,
  ...get(rest), ...i32(2), OP.i32GtU,
  OP.if, VOID_BLOCK, ...get(k), ...get(p), ...byteAt(2), ...i32(16), OP.i32Shl, OP.i32Or, ...set(k), OP.end,
  ...get(k), ...scramble, ...get(h), OP.i32Xor, ...set(h),
  OP.end,
]
/** h ^= h >>> n, on local h */
const xorShift = (h: number, n: number): number[] => [...get(h), ...get(h), ...i32(n), OP.i32ShrU, OP.i32Xor, ...set(h)]
/** h ^= len, then MurmurHash3's finalizer (fmix32), on local h. */
const murmurFinish = (h: number, len: number): number[] => [
  ...get(h), ...get(len), OP.i32Xor, ...set(h),
  ...xorShift(h, 16),
  ...get(h), ...i32(0x85ebca6b | 0), OP.i32Mul, ...set(h),
  ...xorShift(h, 13),
  ...get(h), ...i32(0xc2b2ae35 | 0), OP.i32Mul, ...set(h),
  ...xorShift(h, 16),
]

/** `rolling(p, len) → h`: rollingHash over [p, p+len): four bytes a step, then byte by byte. */
const R_P = 0, R_LEN = 1, R_END4 = 2, R_END = 3, R_H = 4
const rollingBody: number[] = [
  ...endOf(R_P, R_LEN, R_END4, true),
  ...endOf(R_P, R_LEN, R_END, false),
  ...loopUntil([...get(R_P), ...get(R_END4), OP.i32GeU], [...rollWord(R_P, R_H), ...advance(R_P, 4)]),
  ...loopUntil([...get(R_P), ...get(R_END), OP.i32GeU], [...rollByte(R_P, R_H), ...advance(R_P, 1)]),
  ...get(R_H),
]

/** `strong(p, len, seed) → h`: MurmurHash3 x86_32 of [p, p+len) with `seed` (block-hash.ts). */
const S_P = 0, S_LEN = 1, S_H = 2, S_END4 = 3, S_K = 4, S_REST = 5
const strongBody: number[] = [
  ...endOf(S_P, S_LEN, S_END4, true),
  ...loopUntil([...get(S_P), ...get(S_END4), OP.i32GeU], [...murmurWord(S_P, S_H), ...advance(S_P, 4)]),
  ...murmurTail(S_P, S_LEN, S_H, S_K, S_REST),
  ...murmurFinish(S_H, S_LEN),
  ...get(S_H),
]

/**
 * `keys(p, len, seed) → rolling`: both of a block's keys in one pass, rolling's value returned
 * and MurmurHash3's stored at STRONG_ADDR. The two hashes are independent chains of multiplies
 * over the same words, so the CPU runs them side by side: a block keyed in one pass costs little
 * more than the slower of the two (measured: bench/README.md "Delta").
 */
const K_P = 0, K_LEN = 1, K_H = 2, K_END4 = 3, K_END = 4, K_R = 5, K_K = 6, K_REST = 7
const keysBody: number[] = [
  ...endOf(K_P, K_LEN, K_END4, true),
  ...endOf(K_P, K_LEN, K_END, false),
  ...loopUntil([...get(K_P), ...get(K_END4), OP.i32GeU], [...murmurWord(K_P, K_H), ...rollWord(K_P, K_R), ...advance(K_P, 4)]),
  // The last 0–3 bytes: MurmurHash3's tail, then the rolling hash byte by byte.
  ...murmurTail(K_P, K_LEN, K_H, K_K, K_REST),
  ...loopUntil([...get(K_P), ...get(K_END), OP.i32GeU], [...rollByte(K_P, K_R), ...advance(K_P, 1)]),
  ...murmurFinish(K_H, K_LEN),
  ...i32(STRONG_ADDR), ...get(K_H), OP.i32Store, 2, 0,
  ...get(K_R),
]

/**
 * `search(q, last, h, b, fshift) → q`: the matcher's roll (matcher.ts #scan): while the
 * prefilter has no bit for h's top bits and q < last, slides the b-byte window one byte
 * (h = (h − outG[byte leaving]) · B + G[byte entering]). Returns where it stopped; the hash
 * there is stored at HASH_ADDR.
 */
const Q_Q = 0, Q_LAST = 1, Q_H = 2, Q_B = 3, Q_FSHIFT = 4, Q_F = 5
const searchBody: number[] = [
  ...loopUntil([...get(Q_Q), ...get(Q_LAST), OP.i32GeS], [
    // A filter bit for h's top bits: stop here.
    ...get(Q_H), ...get(Q_FSHIFT), OP.i32ShrU, ...tee(Q_F),
    ...i32(3), OP.i32ShrU, ...byteAt(FILTER_ADDR),
    ...i32(1), ...get(Q_F), ...i32(7), OP.i32And, OP.i32Shl, OP.i32And, OP.brIf, 1,
    ...get(Q_H), ...get(Q_Q), ...byteAt(0), ...i32(2), OP.i32Shl, ...tableAt(OUT_G_ADDR), OP.i32Sub,
    ...i32(B), OP.i32Mul,
    ...get(Q_Q), ...get(Q_B), OP.i32Add, ...byteAt(0), ...i32(2), OP.i32Shl, ...tableAt(G_ADDR), OP.i32Add,
    ...set(Q_H),
    ...advance(Q_Q, 1),
  ]),
  ...i32(HASH_ADDR), ...get(Q_H), OP.i32Store, 2, 0,
  ...get(Q_Q),
]

interface KernelExports {
  readonly memory: WasmMemory
  readonly rolling: (p: number, len: number) => number
  readonly strong: (p: number, len: number, seed: number) => number
  readonly search: (q: number, last: number, h: number, b: number, fshift: number) => number
  readonly keys: (p: number, len: number, seed: number) => number
}

/** Compiled on first use (~1 KB; the CLI's help and version never load this module). */
let compiled: object | undefined | null = null
function kernelModule(): object | undefined {
  if (compiled === null) {
    compiled = compileModule(
      assembleModule(1, [
        { name: 'rolling', params: 2, results: 1, locals: 3, body: rollingBody },
        { name: 'strong', params: 3, results: 1, locals: 3, body: strongBody },
        { name: 'search', params: 5, results: 1, locals: 1, body: searchBody },
        { name: 'keys', params: 3, results: 1, locals: 5, body: keysBody },
      ]),
    )
  }
  return compiled
}


/** Whether this runtime compiles the kernel. */
export function wasmKernelAvailable(): boolean {
  return kernelModule() !== undefined
}

/** A kernel instance over a window of `size` bytes; undefined where WebAssembly is missing. Throws
 *  what instantiation throws (a RangeError when no memory can be reserved). */
export function wasmHasher(size: number, tables: SearchTables | undefined): BlockHasher | undefined {
  const module = kernelModule()
  return module === undefined ? undefined : new WasmHasher(idle.pop() ?? instantiate<KernelExports>(module), size, tables)
}

/**
 * Kernel instances their last hasher released (BlockHasher.release), for the next: a new
 * instance reserves a WebAssembly memory (GiBs of address space on 64-bit V8, mapped and
 * unmapped: a matcher per small file or per refinement hole made the JS loops cheaper than
 * the kernel below 256 KiB until these were kept). At most IDLE_KERNELS are kept, each only while
 * its memory is at most IDLE_KERNEL_BYTES (a small file's window or a hole's, with its tables: the
 * ones made by the hundred), so at most 8 MiB stays held; a large file's instance, grown to a
 * 4 MiB window, is made once per file and left to the garbage collector. matchTarget of 200
 * edited 20 KiB text files and 40 of 256 KiB (by hand, CPU ms): 111–153 → 54–84.
 */
const idle: KernelExports[] = []
const IDLE_KERNELS = 8
const IDLE_KERNEL_BYTES = 1024 * 1024

class WasmHasher implements BlockHasher {
  #k: KernelExports
  readonly #data: number
  readonly #b: number
  readonly #fshift: number
  readonly #outG: Int32Array
  bytes: Uint8Array
  #hashView: Int32Array
  #strongView: Uint32Array

  /** `k`: a new instance or an idle one, whose memory holds nothing this hasher needs: every
   *  table is written here, and the window is the caller's to fill. */
  constructor(k: KernelExports, size: number, tables: SearchTables | undefined) {
    this.#k = k
    this.#outG = outTableFor(Math.max(1, tables?.blockSize ?? 1))
    const filterBytes = tables?.filter.length ?? 0
    this.#data = Math.ceil((FILTER_ADDR + filterBytes) / 64) * 64
    this.#ensure(size)
    const mem = this.#k.memory.buffer
    new Int32Array(mem, G_ADDR, 256).set(BYTE_MAP)
    this.#b = tables?.blockSize ?? 1
    this.#fshift = tables?.filterShift ?? 0
    if (tables !== undefined) {
      new Int32Array(mem, OUT_G_ADDR, 256).set(this.#outG)
      new Uint8Array(mem, FILTER_ADDR, filterBytes).set(tables.filter)
    }
    this.bytes = new Uint8Array(mem, this.#data, size)
    this.#hashView = new Int32Array(mem, HASH_ADDR, 1)
    this.#strongView = new Uint32Array(mem, STRONG_ADDR, 1)
  }

  #ensure(size: number): void {
    const mem = this.#k.memory
    const need = this.#data + size
    if (mem.buffer.byteLength < need) mem.grow(Math.ceil((need - mem.buffer.byteLength) / WASM_PAGE))
  }

  grow(size: number): void {
    if (size <= this.bytes.length) return
    this.#ensure(size)
    const mem = this.#k.memory.buffer
    this.bytes = new Uint8Array(mem, this.#data, size)
    this.#hashView = new Int32Array(mem, HASH_ADDR, 1)
    this.#strongView = new Uint32Array(mem, STRONG_ADDR, 1)
  }

  rolling(at: number, len: number): number {
    return this.#k.rolling(this.#data + at, len)
  }

  strong(at: number, len: number): number {
    return this.#k.strong(this.#data + at, len, BLOCK_HASH_SEED) >>> 0
  }

  keys(at: number, len: number): number {
    return this.#k.keys(this.#data + at, len, BLOCK_HASH_SEED)
  }

  get lastStrong(): number {
    if (this.#k === RELEASED) gone()
    return this.#strongView[0]!
  }

  search(q: number, last: number, h: number): number {
    return this.#k.search(this.#data + q, this.#data + last, h, this.#b, this.#fshift) - this.#data
  }

  get hash(): number {
    if (this.#k === RELEASED) gone()
    return this.#hashView[0]!
  }

  roll(q: number, h: number): number {
    if (this.#k === RELEASED) gone()
    return rollWith(this.#outG, h, this.bytes[q]!, this.bytes[q + this.#b]!)
  }

  release(): void {
    const k = this.#k
    if (k === RELEASED) return
    // Any use after this fails at once instead of reading another hasher's window.
    this.#k = RELEASED
    this.bytes = new Uint8Array(0)
    if (idle.length < IDLE_KERNELS && k.memory.buffer.byteLength <= IDLE_KERNEL_BYTES) idle.push(k)
  }
}

/** What a released WasmHasher holds instead of its instance: every use throws. */
const gone = (): never => {
  throw new Error('hash kernel used after its release')
}
const RELEASED: KernelExports = {
  get memory(): never {
    return gone()
  },
  rolling: gone,
  strong: gone,
  search: gone,
  keys: gone,
}

