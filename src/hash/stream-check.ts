import { DsyncError } from '../errors.js'
import { requirePackage } from '../packages.js'
import { compileModule } from '../wasm-asm.js'

/**
 * The check of a file sent whole whose SHA-256 nobody needs yet: XXH3-128 of its bytes (delta
 * format version 2, PROTOCOL.md §4.11). It proves the bytes written are the bytes read, as
 * the trailer's SHA-256 does, but it is not an identity: a peer could make two files share one,
 * so a receiver never files it as a digest (the file is then recorded by size and time, and
 * hashed with SHA-256 when it is first needed as a seed or a copy's source).
 *
 * Why (issue 8): a new 1 GiB file was hashed with SHA-256 on both sides, a third of their CPU.
 * `npm run bench -- hash` on the bench's 2-vCPU EPYC, 1 MiB updates: node:crypto SHA-256 1.81
 * GB/s with the CPU's SHA extensions, 0.55 GB/s with them switched off
 * (`OPENSSL_ia32cap=:~0x20000000`: the AVX2 code path, as on CPUs without them), hash-wasm's
 * XXH3-128 4.2–4.35 GB/s either way (by hand: its XXH64 ~10 GB/s, BLAKE3 0.8). rsync 3.2+
 * checks whole files with XXH3-128 for the same reason.
 *
 * Two backends of the one function, the same bytes out (test/hash/stream-check.ts):
 * - xxhash-addon (BSD-2, native; its npm package holds prebuilt binaries for Linux glibc and
 *   musl, macOS and Windows, x64 and arm64, and it is an optional dependency: nothing compiles
 *   here). 1 MiB updates, 256 MiB, by hand: 6.9–8.0 GB/s, against 2.0–3.5 GB/s for hash-wasm,
 *   which also copies each update into its memory. A new 1 GiB file is hashed on both sides:
 *   ~0.3 s less CPU on each.
 * - hash-wasm (MIT, no dependencies): WebAssembly inlined in JavaScript, where the addon has no
 *   binary for the platform or fails to load.
 * Each is loaded on first use, not at startup (the addon's load is ~6.5 ms).
 */

/** Bytes of a stream check. */
export const STREAM_CHECK_BYTES = 16

/** A running XXH3-128: feed bytes in order with `update`, then `digest` once. */
export interface StreamChecker {
  update(data: Uint8Array): void
  /** the 16 bytes of the check, big-endian as XXH3-128's canonical form */
  digest(): Uint8Array
}

let create: Promise<typeof import('hash-wasm').createXXHash128> | undefined
/** The addon's constructor; null where it is not installed or does not load. */
let nativeXxh128: (new (seed: Buffer) => NativeXxh128) | null | undefined

/** xxhash-addon's XXHash128 (its index.d.ts types the argument as a Buffer: any bytes do). */
interface NativeXxh128 {
  update(data: Uint8Array): void
  digest(): Buffer
}

function loadNative(): (new (seed: Buffer) => NativeXxh128) | null {
  if (nativeXxh128 === undefined) {
    try {
      nativeXxh128 = (requirePackage('xxhash-addon') as { XXHash128: new (seed: Buffer) => NativeXxh128 }).XXHash128
    } catch {
      // Policy: not installed (an optional dependency) or no binary for this platform: the
      // WebAssembly backend gives the same bytes, only slower.
      nativeXxh128 = null
    }
  }
  return nativeXxh128
}

/** Seed 0, as 8 bytes: the addon's way to ask for plain XXH3-128 (hash-wasm's default). */
const SEED_ZERO = Buffer.alloc(8)

/**
 * A new checker. Throws DsyncError BAD_DATA where neither backend loads (no addon binary, and
 * no WebAssembly: node --jitless): a sender then checks with SHA-256 (streamCheckerOrNone), and
 * only a receiver given a version-2 delta needs one.
 */
export async function newStreamChecker(): Promise<StreamChecker> {
  const Native = loadNative()
  if (Native !== null) {
    const h = new Native(SEED_ZERO)
    return { update: (data) => h.update(data), digest: () => new Uint8Array(h.digest()) }
  }
  return wasmStreamChecker()
}

/** Which backend newStreamChecker uses here: the native addon, else WebAssembly (which may
 *  still fail to load: newStreamChecker says so). */
export function streamCheckBackend(): 'xxhash-addon' | 'hash-wasm' {
  return loadNative() !== null ? 'xxhash-addon' : 'hash-wasm'
}

/** The WebAssembly backend alone (the fallback; tests compare the two). */
export async function wasmStreamChecker(): Promise<StreamChecker> {
  // The one-algorithm build, a UMD file: its exports come as the default one, under Node's ESM
  // loader and in the bundle (bin/bundle.js) alike; `?? m` should another bundler give them named.
  create ??= import('hash-wasm/dist/xxhash128.umd.min.js').then((m) => (m.default ?? m).createXXHash128)
  try {
    const h = await (await create)()
    h.init()
    return { update: (data) => void h.update(data), digest: () => h.digest('binary') }
  } catch (err) {
    throw new DsyncError('BAD_DATA', 'the file came checked with XXH3-128, which cannot load on this machine (no WebAssembly?); run dsync without --jitless', { cause: err })
  }
}

/** A checker, or undefined where none can load (the caller uses SHA-256 instead). */
export async function streamCheckerOrNone(): Promise<StreamChecker | undefined> {
  try {
    return await newStreamChecker()
  } catch {
    // Policy: the SHA-256 trailer every peer reads is the fallback; nothing is lost but time.
    return undefined
  }
}

/**
 * Whether a checker can load here (the handshake offers §4.11's versions only then): where
 * WebAssembly compiles, hash-wasm's backend does (it needs nothing more); else the addon, if it
 * loads. The check compiles an empty module, ~0.02 ms. It used to load hash-wasm's XXH3-128
 * itself: 18 ms here (its module compiled and instantiated), which a client waited for between
 * the server's `hello` and its `auth`, 13 ms in a traced push. `node --jitless` has no
 * WebAssembly at all (test/sync/fast-check.ts runs with and without it, and without addons).
 */
export async function streamCheckAvailable(): Promise<boolean> {
  return wasmCompiles() || loadNative() !== null
}

/** An empty WebAssembly module: its magic and version 1. */
const EMPTY_MODULE = Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00)

/** Whether WebAssembly compiles here (none under --jitless; an embedder may refuse it). */
function wasmCompiles(): boolean {
  return compileModule(EMPTY_MODULE) !== undefined
}
