import { GEAR } from './gear-table.js'
import { assembleModule, compileModule, get, i32, instantiate, OP, set, tee, uleb, VOID_BLOCK, WASM_PAGE, type WasmMemory } from '../wasm-asm.js'

/**
 * The CDC cut-point search as a WebAssembly kernel: the same definition as the JS loop in
 * cdc.ts (Gear hash from 0 at `min`, the strict threshold up to `avg`, the loose one up to
 * `max`), but compiled to a tight machine loop with `h` in a register and no bounds checks
 * on the table. Cut points are bit-identical (test/chunk/cdc.ts runs both against the golden
 * file).
 *
 * Memory layout (one 64 KiB page of header, then the data window):
 *   [0, 1024)          the Gear table, 256 × i32 little-endian
 *   [1024, 65536)      cut ends written by `scan` (absolute addresses), up to OUT_CAP
 *   [65536, …)         the data window, copied in by the caller
 */
const GEAR_ADDR = 0
const OUT_ADDR = 1024
/** Cut ends one `scan` call can return (the rest of the first page). */
export const OUT_CAP = (65536 - OUT_ADDR) / 4
export const DATA_ADDR = 65536
const PAGE = WASM_PAGE

// Locals of `scan`: its 10 parameters, then 6 locals.
const POS = 0
const END = 1
const FINAL = 2
const OUT_PTR = 3
const OUT_CAP_L = 4
const MIN = 5
const AVG = 6
const MAX = 7
const THR_S = 8
const THR_L = 9
const COUNT = 10
const N = 11
const I = 12
const H = 13
const NORMAL = 14
const LIMIT = 15

/** memarg: alignment exponent 0 (the data is not aligned), offset 0. */
const load32 = [OP.i32Load, 2, 0]
const store32 = [OP.i32Store, 2, 0]
/** (select a b c) = c ? a : b; `min` of two unsigned locals. */
const minU = (a: number, b: number): number[] => [...get(a), ...get(b), ...get(a), ...get(b), OP.i32LtU, OP.select]

/** h = (h << 1) + GEAR[byte at i + k]: one step of the Gear hash. */
function gearStep(k: number): number[] {
  return [
    ...get(H), ...i32(1), OP.i32Shl,
    ...get(I), OP.i32Load8U, 0, ...uleb(k), ...i32(2), OP.i32Shl, ...load32,
    OP.i32Add, ...set(H),
  ]
}

/**
 * One Gear search, from `i` to `bound`, branching out to `$found` (the block around both
 * searches) with `i` just past the cut byte when the hash falls below `thr`, and falling
 * through with i = bound otherwise. `h <u thr` with thr = 2^(32 − k) is the same test as
 * "the top k bits of h are zero", i.e. cdc.ts's definition. Unrolled by 4 with one bound
 * check per 4 bytes, so the steps share the loop's compare and increment: 64 MiB in memory,
 * best of 7, ~1.28 GB/s byte by byte against ~1.46 GB/s unrolled (same machine and run).
 *
 *   (block $words (loop $w                                   ;; 4 bytes per turn
 *     (br_if $words (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $bound)))
 *     step(0) (if (i32.lt_u (local.get $h) (local.get $thr)) (then i += 1, br $found))
 *     … step(1), step(2), step(3) likewise with i += 2, 3, 4 …
 *     (local.set $i (i32.add (local.get $i) (i32.const 4)))
 *     (br $w)))
 *   (block $bytes (loop $b                                   ;; the last 0..3 bytes
 *     (br_if $bytes (i32.ge_u (local.get $i) (local.get $bound)))
 *     step(0) (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *     (br_if $found (i32.lt_u (local.get $h) (local.get $thr)))
 *     (br $b)))
 */
function gearSearch(bound: number, thr: number, foundDepth: number): number[] {
  const words: number[] = [
    OP.block, VOID_BLOCK,
    OP.loop, VOID_BLOCK,
    ...get(I), ...i32(4), OP.i32Add, ...get(bound), OP.i32GtU, OP.brIf, 1,
  ]
  for (let k = 0; k < 4; k++) {
    words.push(
      ...gearStep(k),
      ...get(H), ...get(thr), OP.i32LtU,
      OP.if, VOID_BLOCK,
      ...get(I), ...i32(k + 1), OP.i32Add, ...set(I),
      OP.br, ...uleb(foundDepth + 3), // out of if, loop and block
      OP.end,
    )
  }
  words.push(...get(I), ...i32(4), OP.i32Add, ...set(I), OP.br, 0, OP.end, OP.end)
  const bytes: number[] = [
    OP.block, VOID_BLOCK,
    OP.loop, VOID_BLOCK,
    ...get(I), ...get(bound), OP.i32GeU, OP.brIf, 1,
    ...gearStep(0),
    ...get(I), ...i32(1), OP.i32Add, ...set(I),
    ...get(H), ...get(thr), OP.i32LtU, OP.brIf, ...uleb(foundDepth + 2),
    OP.br, 0,
    OP.end,
    OP.end,
  ]
  return [...words, ...bytes]
}

/**
 * `scan(pos, end, final, outPtr, outCap, min, avg, max, thrS, thrL) → count`: cuts chunks
 * from `pos` while at least `max` bytes remain before `end` (or any remain, when `final`),
 * writing each chunk's end address to `outPtr` (at most `outCap`), and returns how many.
 */
const scanBody: number[] = [
  OP.block, VOID_BLOCK, // $done
  OP.loop, VOID_BLOCK, // $chunks
  ...get(END), ...get(POS), OP.i32Sub, ...tee(N), OP.i32Eqz, OP.brIf, 1,
  ...get(FINAL), OP.i32Eqz, ...get(N), ...get(MAX), OP.i32LtU, OP.i32And, OP.brIf, 1,
  ...get(COUNT), ...get(OUT_CAP_L), OP.i32GeU, OP.brIf, 1,
  ...get(END), ...set(I), // a chunk of at most `min` bytes: the rest
  ...get(N), ...get(MIN), OP.i32GtU,
  OP.if, VOID_BLOCK,
  ...get(POS), ...minU(N, MAX), OP.i32Add, ...set(LIMIT),
  ...get(POS), ...minU(N, AVG), OP.i32Add, ...set(NORMAL),
  ...i32(0), ...set(H),
  ...get(POS), ...get(MIN), OP.i32Add, ...set(I),
  OP.block, VOID_BLOCK, // $found
  ...gearSearch(NORMAL, THR_S, 0),
  ...gearSearch(LIMIT, THR_L, 0),
  OP.end,
  OP.end,
  ...get(OUT_PTR), ...get(COUNT), ...i32(2), OP.i32Shl, OP.i32Add, ...get(I), ...store32,
  ...get(COUNT), ...i32(1), OP.i32Add, ...set(COUNT),
  ...get(I), ...set(POS),
  OP.br, 0,
  OP.end,
  OP.end,
  ...get(COUNT),
]

/** The kernel's exports, as this module uses them. */
interface KernelExports {
  readonly memory: WasmMemory
  readonly scan: (
    pos: number, end: number, final: number, outPtr: number, outCap: number,
    min: number, avg: number, max: number, thrS: number, thrL: number,
  ) => number
}

/** A CDC kernel instance: its scratch memory and typed views of the header. */
export interface CdcKernel {
  /** Finds the cuts of `buf[start, end)`; see `scanCuts` in cdc.ts for the contract. */
  scan(buf: Uint8Array, start: number, end: number, final: boolean, ends: Int32Array, p: KernelParams): number
}

/** Chunk sizes and thresholds as the kernel takes them. */
export interface KernelParams {
  readonly min: number
  readonly avg: number
  readonly max: number
  /** 2^(32 − k) for the strict / loose mask of k top bits, as an i32 bit pattern. */
  readonly thrS: number
  readonly thrL: number
}

/**
 * Compiles and instantiates the kernel; undefined where WebAssembly is missing or refuses
 * (the caller then uses the JS loop). Synchronous: the module is ~300 bytes.
 */
export function instantiateCdcKernel(): CdcKernel | undefined {
  const module = compileModule(assembleModule(2, [{ name: 'scan', params: 10, results: 1, locals: 6, body: scanBody }]))
  if (module === undefined) return undefined
  let exports: KernelExports
  try {
    exports = instantiate<KernelExports>(module)
  } catch (err) {
    // No address space left for a WebAssembly memory (a `ulimit -v`): the JS loop needs none.
    if (err instanceof RangeError) return undefined
    throw err
  }
  const { memory, scan } = exports
  new Int32Array(memory.buffer, GEAR_ADDR, 256).set(GEAR)
  return {
    scan(buf, start, end, final, ends, p) {
      // Windows of at least 1 MiB and 2 × max: each copy is mostly used (at most `max` bytes
      // of look-ahead are copied twice), and large copies run at memcpy speed.
      const window = Math.max(1 << 20, 2 * p.max)
      if (memory.buffer.byteLength < DATA_ADDR + window) {
        memory.grow(Math.ceil((DATA_ADDR + window - memory.buffer.byteLength) / PAGE))
      }
      let count = 0
      let pos = start
      while (count < ends.length && pos < end) {
        const wend = Math.min(end, pos + window)
        const wfinal = final && wend === end
        if (!wfinal && wend - pos < p.max) break
        const mem = new Uint8Array(memory.buffer)
        mem.set(buf.subarray(pos, wend), DATA_ADDR)
        const cap = Math.min(OUT_CAP, ends.length - count)
        const k = scan(DATA_ADDR, DATA_ADDR + (wend - pos), wfinal ? 1 : 0, OUT_ADDR, cap, p.min, p.avg, p.max, p.thrS, p.thrL)
        const out = new Int32Array(memory.buffer, OUT_ADDR, k)
        const shift = pos - DATA_ADDR
        for (let j = 0; j < k; j++) ends[count + j] = out[j]! + shift
        count += k
        if (k === 0) break
        pos = ends[count - 1]!
      }
      return count
    },
  }
}
