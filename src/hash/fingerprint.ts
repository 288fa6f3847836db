import { hash as cryptoHash } from 'node:crypto'

/**
 * A chunk fingerprint: the first 16 bytes of the chunk's SHA-256, as 32 lowercase hex digits.
 * Made only here, so it cannot be confused with a path or any other string.
 *
 * Why SHA-256 from node:crypto: it runs on the CPU's SHA extensions. bench/hash.ts on this
 * machine, 8 KiB chunks: node:crypto sha256 ~1.4 GB/s, @noble/hashes sha256 ~145 MB/s,
 * @noble/hashes blake3 ~44 MB/s (figures in README "Measured"). 128 bits is ample for chunk
 * identity (birthday bound 2^64 chunks) and halves the bytes on the wire against 256.
 */
export type Fingerprint = string & { readonly __brand: 'Fingerprint' }

/** Bytes of a fingerprint on the wire. */
export const FINGERPRINT_BYTES = 16

const HEX_RE = /^[0-9a-f]{32}$/

/** Fingerprint of one chunk's bytes. */
export function fingerprint(data: Uint8Array): Fingerprint {
  return cryptoHash('sha256', data, 'hex').slice(0, FINGERPRINT_BYTES * 2) as Fingerprint
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
