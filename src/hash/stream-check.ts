import { DsyncError } from '../errors.js'

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
 * hash-wasm (MIT, no dependencies) is WebAssembly inlined in JavaScript: nothing compiles or
 * downloads at install. Loaded on first use, not at startup.
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

/**
 * A new checker. Throws DsyncError BAD_DATA where WebAssembly cannot run (node --jitless): a
 * sender then checks with SHA-256 (streamCheckerOrNone), and only a receiver given a version-2
 * delta needs one.
 */
export async function newStreamChecker(): Promise<StreamChecker> {
  // The one-algorithm build, a UMD file: its exports come as the default one under Node's ESM
  // loader and as named ones bundled (bin/bundle.js).
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
