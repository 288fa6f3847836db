import type { ChunkParams } from './params.js'
import type { BulkCutter } from './bulk-cutter.js'
import { instantiateCdcKernel, type CdcKernel, type KernelParams } from './cdc-wasm.js'
import { GEAR } from './gear-table.js'

/** Which implementation of the cut-point search a CDC cutter uses. */
export type CdcKernelKind = 'wasm' | 'js'

/**
 * The WebAssembly kernel, instantiated once per thread at load (it is ~300 bytes and compiles
 * in well under a millisecond); undefined where WebAssembly is unavailable. Sharing one
 * instance is safe: its memory is scratch, filled and read within one synchronous call.
 */
const WASM_KERNEL: CdcKernel | undefined = instantiateCdcKernel()

/** Whether this runtime has the WebAssembly kernel (else every cutter uses the JS loop). */
export const CDC_WASM_AVAILABLE: boolean = WASM_KERNEL !== undefined

/** A mask of the `k` most significant bits of a 32-bit word. */
function topBits(k: number): number {
  return k >= 32 ? -1 : ~0 << (32 - k)
}

/**
 * 2^(32 − k) as an i32 bit pattern, the WebAssembly kernel's form of `topBits(k)`: `h <u thr`
 * holds exactly when the top `k` bits of h are zero. For k = 32 it is 1 (only h = 0 cuts).
 */
function threshold(k: number): number {
  return k >= 32 ? 1 : (1 << (32 - k)) | 0
}

/**
 * FastCDC-style content-defined chunking (Xia et al., USENIX ATC 2016) with a Gear rolling
 * hash: h = (h << 1) + GEAR[byte]. Bit k of h depends on the last k + 1 bytes only, so the
 * masks take the top bits: a cut then depends on the last 32 bytes, and an edit moves at most
 * the cut points near it.
 *
 * Normalized chunking, level 2 (FastCDC §3.3): before `avg` the mask has log2(avg) + 2 bits
 * (cuts are 4× rarer), after it log2(avg) − 2 (4× likelier). Sizes bunch around `avg` instead
 * of the exponential spread of plain CDC, which wastes fewer bytes on very long chunks.
 * Cut-point search starts at `min` (FastCDC's skip): those bytes are never hashed.
 *
 * Speed (bench/chunk.ts, 256 MiB seeded random data in memory, one thread, 2.5 GHz Xeon; see
 * README "Benchmarks"): the WebAssembly kernel ~1.4 GB/s, this JS loop ~300–490 MB/s (the
 * skeleton's loop, before the kernel: ~330–440 MB/s on the same runs). `cutMany` runs the
 * WebAssembly kernel (cdc-wasm.ts) when the runtime has WebAssembly, else the JS loop; `cut` (one chunk at a time, on any buffer) always runs the
 * JS loop, because the kernel would first have to copy up to `max` bytes into its memory to
 * find a chunk of typically `avg`. `opts.kernel` forces one (tests run both on the golden
 * file).
 */
export function cdcCutter(params: ChunkParams, opts: { kernel?: CdcKernelKind } = {}): BulkCutter {
  const { min, avg, max } = params
  const bits = Math.max(1, Math.round(Math.log2(avg)))
  const strictBits = bits + 2
  const looseBits = Math.max(1, bits - 2)
  const maskS = topBits(strictBits)
  const maskL = topBits(looseBits)
  const p: KernelParams = Object.freeze({ min, avg, max, thrS: threshold(strictBits), thrL: threshold(looseBits) })
  const gear = GEAR

  /**
   * The end (an index into `buf`) of the chunk that starts at `pos`, given `buf[pos, end)`.
   * This function IS the cut definition (a protocol constant; test/fixtures/cdc-golden.json):
   * a Gear hash h = 2h + GEAR[byte] (mod 2^32), started from 0 at `pos + min`; the chunk
   * ends after the first byte where the top bits of h under `maskS` are all zero up to
   * `pos + avg`, or under `maskL` up to `pos + max`, or at `pos + max`, or at `end` if
   * sooner. Constants captured from the closure, everything else in locals, Int32
   * arithmetic: V8 keeps `h` and `i` in registers.
   */
  const cutEnd = (buf: Uint8Array, pos: number, end: number): number => {
    const n = end - pos
    if (n <= min) return end
    const limit = pos + (n < max ? n : max)
    const normal = pos + (n < avg ? n : avg)
    let h = 0
    let i = pos + min
    // `(h & mask) === 0` rather than the kernel's `h <u thr`: JS has no unsigned compare,
    // and `h >>> 0 < thr` makes V8 compare doubles (measured ~300 against ~450 MB/s).
    for (; i < normal; i++) {
      h = ((h << 1) + gear[buf[i]!]!) | 0
      if ((h & maskS) === 0) return i + 1
    }
    for (; i < limit; i++) {
      h = ((h << 1) + gear[buf[i]!]!) | 0
      if ((h & maskL) === 0) return i + 1
    }
    return limit
  }

  const wasm = opts.kernel === 'js' ? undefined : WASM_KERNEL
  return {
    maxSize: max,
    cut(buf: Uint8Array, start: number, end: number): number {
      return cutEnd(buf, start, end) - start
    },
    cutMany(buf: Uint8Array, start: number, end: number, final: boolean, ends: Int32Array): number {
      if (wasm) return wasm.scan(buf, start, end, final, ends, p)
      const cap = ends.length
      let count = 0
      let pos = start
      while (count < cap && pos < end && (final || end - pos >= max)) {
        pos = cutEnd(buf, pos, end)
        ends[count++] = pos
      }
      return count
    },
  }
}
