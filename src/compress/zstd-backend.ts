import * as zlib from 'node:zlib'
import { requirePackage } from '../packages.js'

/**
 * One zstd implementation. Every backend writes and reads standard zstd frames (RFC 8878), so a
 * frame from one decodes with any other, with the `zstd` tool, and with older dsync builds.
 */
export interface ZstdBackend {
  /** For reports and benchmarks: `node:zlib` or `wasm`. */
  readonly name: string
  /** One frame holding all of `raw`, at zstd level `level`. */
  compress(raw: Uint8Array, level: number): Uint8Array
  /** Decodes `data` into at most `rawLength` bytes; throws (any error) on a bad frame or past that size. */
  decompress(data: Uint8Array, rawLength: number): Uint8Array
  /** The same with `dict` (raw content both sides have) as the frame's dictionary; absent where
   *  the backend cannot. */
  readonly withDictionary?: {
    compress(raw: Uint8Array, dict: Uint8Array, level: number): Uint8Array
    decompress(data: Uint8Array, dict: Uint8Array, rawLength: number): Uint8Array
  }
}

/** The part of node:zlib we use where the running Node has zstd (22.15+ / 23.8+; not in @types/node 20). */
interface NodeZlibZstd {
  zstdCompressSync(raw: Uint8Array, opts: { params: Record<number, number> }): Uint8Array
  zstdDecompressSync(data: Uint8Array, opts: { maxOutputLength: number; chunkSize: number }): Uint8Array
  constants: { ZSTD_c_compressionLevel: number }
}

/** Node's own zstd (the libzstd built into Node), or null on a Node without it (Node 20). */
export function nodeZstd(): ZstdBackend | null {
  const z = zlib as unknown as Partial<NodeZlibZstd>
  if (typeof z.zstdCompressSync !== 'function' || typeof z.zstdDecompressSync !== 'function' || z.constants === undefined) return null
  const { zstdCompressSync, zstdDecompressSync } = z as NodeZlibZstd
  const levelParam = z.constants.ZSTD_c_compressionLevel
  return {
    name: 'node:zlib',
    compress: (raw, level) => zstdCompressSync(raw, { params: { [levelParam]: level } }),
    // maxOutputLength: the decoder throws past the declared size instead of growing its output.
    // chunkSize: one output buffer of the declared size rather than 16 KiB pieces joined at the end.
    decompress: (data, rawLength) =>
      zstdDecompressSync(data, { maxOutputLength: Math.max(1, rawLength), chunkSize: Math.max(64, rawLength) }),
  }
}

/** The part of @bokuweb/zstd-wasm we use (libzstd compiled to WebAssembly, shipped in the npm package). */
interface ZstdWasmModule {
  init(): Promise<void>
  compress(raw: Uint8Array, level: number): Uint8Array
  decompress(data: Uint8Array, opts: { defaultHeapSize: number }): Uint8Array
  createCCtx(): number
  createDCtx(): number
  compressUsingDict(cctx: number, raw: Uint8Array, dict: Uint8Array, level: number): Uint8Array
  decompressUsingDict(dctx: number, data: Uint8Array, dict: Uint8Array, opts: { defaultHeapSize: number }): Uint8Array
}

/**
 * libzstd as WebAssembly, for a Node without zstd of its own: nothing to compile or download at
 * install, the same on every platform. Null where it cannot load (no WebAssembly, e.g. --jitless).
 */
export async function wasmZstd(): Promise<ZstdBackend | null> {
  let m: ZstdWasmModule
  try {
    m = requirePackage('@bokuweb/zstd-wasm') as ZstdWasmModule
    await m.init()
  } catch (err) {
    // Policy: a zstd that cannot load means literals go out as deflate (codec 2); say nothing here.
    if (err instanceof Error) return null
    throw err
  }
  // One context each, made when first needed and kept: the calls are synchronous, so never shared.
  let cctx: number | undefined
  let dctx: number | undefined
  return {
    name: 'wasm',
    // Through a kept context, as ZSTD_compress_usingDict with no dictionary: the same frame as
    // the module's compress(), whose ZSTD_compress sets up (allocates and clears) a context per
    // call. By hand, level 3: a 1.9 KB batch of messages 22–37 → 12–15 µs, 64 KiB of text 168–178
    // → 13–17 µs; a session compresses a batch or a literal frame per file or two.
    compress: (raw, level) => m.compressUsingDict((cctx ??= m.createCCtx()), raw, NO_DICTIONARY, level),
    // The module sizes its output by the frame's content size when the header has one (the
    // caller has checked it equals rawLength), else by defaultHeapSize: never more than declared.
    decompress: (data, rawLength) => m.decompress(data, { defaultHeapSize: Math.max(1, rawLength) }),
    withDictionary: {
      compress: (raw, dict, level) => m.compressUsingDict((cctx ??= m.createCCtx()), raw, dict, level),
      decompress: (data, dict, rawLength) => m.decompressUsingDict((dctx ??= m.createDCtx()), data, dict, { defaultHeapSize: Math.max(1, rawLength) }),
    },
  }
}

/** An empty dictionary: a kept context's plain compression (wasmZstd). */
const NO_DICTIONARY = new Uint8Array(0)

/** Every zstd backend that loads here, preferred first: Node's own, then WebAssembly. */
export async function loadZstdBackends(): Promise<readonly ZstdBackend[]> {
  const found = [nodeZstd(), await wasmZstd()]
  return Object.freeze(found.filter((b): b is ZstdBackend => b !== null))
}
