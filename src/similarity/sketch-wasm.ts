import { GEAR } from '../chunk/index.js'
import { assembleModule, compileModule, get, i32, instantiate, loopUntil, OP, set, uleb, WASM_PAGE, type WasmMemory } from '../wasm-asm.js'

/**
 * The sketch's Gear loop (format 1: sketch.ts SketchBuilder #feed) as a WebAssembly kernel: a
 * Gear hash per byte, the last 32 hashes in a ring, and a stop at each position whose hash
 * passes the level's mask (an anchor, about one byte in 512, which JavaScript then adds). The
 * same definition as the JS loop, which stays the fallback (test/similarity/sketch.ts runs both).
 * JS ~250 MB/s per CPU second (a new 1 MiB file's probe anchors and the receiver's sketch index
 * cost ~14 ms a MiB on each side); figures of the kernel: bench/README.md "Similarity".
 *
 * Memory:
 *   [0, 1024)        the Gear table, 256 × i32
 *   [1024, 1152)     the ring: Gear's h of the last 32 positions, by position mod 32
 *   [1152, 1156)     the hash the scan stopped with; [1156, 1160) the ring's entry it replaced
 *   [65536, …)       the data window, copied in by the caller
 */
const GEAR_ADDR = 0
const RING_ADDR = 1024
const H_ADDR = 1152
const PRIOR_ADDR = 1156
const DATA_ADDR = 65536
/** Bytes copied in per call. */
const WINDOW = 1 << 20

const P = 0, END = 1, H = 2, SLOT = 3, MASK = 4, PRIOR = 5
/**
 * `scan(p, end, h, slot, mask) → p'`: from p, per byte: h = (h << 1) + GEAR[byte]; the ring's
 * entry at `slot` (the h of 32 positions back) is replaced by h; slot = (slot + 1) mod 32; stops
 * after the first byte whose h & mask is 0, or at end. Returns the address after the last byte
 * taken; h, and the replaced entry, are at H_ADDR and PRIOR_ADDR.
 */
const scanBody: number[] = [
  ...loopUntil([...get(P), ...get(END), OP.i32GeU], [
    ...get(H), ...i32(1), OP.i32Shl,
    ...get(P), OP.i32Load8U, 0, 0, ...i32(2), OP.i32Shl, OP.i32Load, 2, ...uleb(GEAR_ADDR),
    OP.i32Add, ...set(H),
    ...get(SLOT), ...i32(2), OP.i32Shl, OP.i32Load, 2, ...uleb(RING_ADDR), ...set(PRIOR),
    ...get(SLOT), ...i32(2), OP.i32Shl, ...get(H), OP.i32Store, 2, ...uleb(RING_ADDR),
    ...get(SLOT), ...i32(1), OP.i32Add, ...i32(31), OP.i32And, ...set(SLOT),
    ...get(P), ...i32(1), OP.i32Add, ...set(P),
    ...get(H), ...get(MASK), OP.i32And, OP.i32Eqz, OP.brIf, 1,
  ]),
  ...i32(H_ADDR), ...get(H), OP.i32Store, 2, 0,
  ...i32(PRIOR_ADDR), ...get(PRIOR), OP.i32Store, 2, 0,
  ...get(P),
]

interface KernelExports {
  readonly memory: WasmMemory
  readonly scan: (p: number, end: number, h: number, slot: number, mask: number) => number
}

/** The kernel, shared: a call copies its data and its builder's ring in and out, and runs to its
 *  end with no await, so builders of several files at once never see each other's state. */
export interface GearKernel {
  /**
   * The Gear loop over `data`, the first byte at file position `pos` (its ring slot pos mod 32),
   * from hash `h` with the builder's `ring` (32 entries, updated in place). At each byte whose h
   * & mask() is 0, calls onAnchor(index in data, h, the ring entry it replaced): mask() is read
   * again after each (an anchor may raise the level). Returns h after the last byte.
   */
  feed(data: Uint8Array, pos: number, h: number, ring: Int32Array, mask: () => number, onAnchor: (i: number, h: number, prior: number) => void): number
}

let kernel: GearKernel | undefined | null = null

/** The kernel, instantiated on first use; undefined where WebAssembly is missing. */
export function gearKernel(): GearKernel | undefined {
  if (kernel !== null) return kernel
  const module = compileModule(assembleModule(1, [{ name: 'scan', params: 5, results: 1, locals: 1, body: scanBody }]))
  if (module === undefined) return (kernel = undefined)
  let exports: KernelExports
  try {
    exports = instantiate<KernelExports>(module)
    exports.memory.grow(Math.ceil((DATA_ADDR + WINDOW - exports.memory.buffer.byteLength) / WASM_PAGE))
  } catch (err) {
    // No address space left for a WebAssembly memory (a `ulimit -v`): the JS loop needs none.
    if (err instanceof RangeError) return (kernel = undefined)
    throw err
  }
  const { memory, scan } = exports
  const buf = memory.buffer
  new Int32Array(buf, GEAR_ADDR, 256).set(GEAR)
  const ringView = new Int32Array(buf, RING_ADDR, 32)
  const out = new Int32Array(buf, H_ADDR, 2)
  const mem = new Uint8Array(buf, DATA_ADDR, WINDOW)
  return (kernel = {
    feed(data, pos, h, ring, mask, onAnchor) {
      ringView.set(ring)
      for (let from = 0; from < data.length; from += WINDOW) {
        const n = Math.min(WINDOW, data.length - from)
        mem.set(data.subarray(from, from + n))
        const end = DATA_ADDR + n
        let p = DATA_ADDR
        while (p < end) {
          const m = mask()
          p = scan(p, end, h, (pos + from + (p - DATA_ADDR)) & 31, m)
          h = out[0]!
          if ((h & m) === 0) onAnchor(from + (p - DATA_ADDR) - 1, h, out[1]!)
        }
      }
      ring.set(ringView)
      return h
    },
  })
}
