import { hash as cryptoHash } from 'node:crypto'
import type { FileDigest } from './file-digest.js'

/**
 * A chunk fingerprint: the first 16 bytes of the chunk's SHA-256, as 32 lowercase hex digits.
 * Made only here, so it cannot be confused with a path or any other string.
 *
 * Why SHA-256 from node:crypto: native (OpenSSL), and on CPUs with SHA extensions the fastest
 * strong hash there is (~1.4 GB/s per 8 KiB chunk seen on such a machine). bench/hash.ts on
 * the 2-vCPU Xeon without SHA-NI (README "Benchmarks"): node:crypto sha256 ~250–380 MB/s,
 * sha1 ~800, md5 ~600, sha512-256 ~530 (blake2b512 about the same); @noble/hashes sha256
 * ~40–145 MB/s and blake3 ~17–44 MB/s, so pure JS is out. SHA-256 is then the end-to-end
 * bottleneck there (chunkFile hashes every byte twice: fingerprint and whole-file digest).
 * 128 bits is ample for chunk identity (birthday bound 2^64 chunks) and halves the bytes on
 * the wire against 256.
 */
export type Fingerprint = string & { readonly __brand: 'Fingerprint' }

/** Bytes of a fingerprint on the wire. */
export const FINGERPRINT_BYTES = 16

const HEX_RE = /^[0-9a-f]{32}$/

/** Fingerprint of one chunk's bytes. */
export function fingerprint(data: Uint8Array): Fingerprint {
  return cryptoHash('sha256', data, 'hex').slice(0, FINGERPRINT_BYTES * 2) as Fingerprint
}

/** The fingerprint of a chunk that is a whole file, from the file's digest: both are its
 *  SHA-256 (the digest whole, the fingerprint its first 16 bytes), so it is not hashed twice. */
export function fingerprintOfWhole(digest: FileDigest): Fingerprint {
  return digest.slice(0, FINGERPRINT_BYTES * 2) as Fingerprint
}

/** Fingerprint from its 16 raw bytes (as read from the wire or a file). */
export function fingerprintFromBytes(bytes: Uint8Array, offset = 0): Fingerprint {
  return Buffer.from(bytes.buffer, bytes.byteOffset + offset, FINGERPRINT_BYTES).toString('hex') as Fingerprint
}

/** Writes a fingerprint's 16 raw bytes into `out` at `offset`. */
export function fingerprintToBytes(fp: Fingerprint, out: Uint8Array, offset = 0): void {
  Buffer.from(out.buffer, out.byteOffset + offset, FINGERPRINT_BYTES).write(fp, 'hex')
}

/** Checks a string from outside (JSON, the wire) and brands it; undefined when malformed. */
export function parseFingerprint(s: string): Fingerprint | undefined {
  return HEX_RE.test(s) ? (s as Fingerprint) : undefined
}
