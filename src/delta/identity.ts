import type { FileDigest } from '../types.js'
import { MAX_VARINT_BYTES, openFormat } from './bytes.js'
import { DELTA_MAGIC, DIGEST_BYTES, DELTA_VERSION, OP } from './delta-format.js'

/** The most bytes a delta that copies its whole seed in place takes: magic and version, the
 *  seed's size, COPY (op, offset 0 in one byte, length), END (op, size) and the digest. */
export const IDENTITY_DELTA_MAX_BYTES = DELTA_MAGIC.length + 1 + MAX_VARINT_BYTES + (1 + 1 + MAX_VARINT_BYTES) + (1 + MAX_VARINT_BYTES) + DIGEST_BYTES

/**
 * The SHA-256 a delta ends with when it rebuilds its seed exactly: one copy of the whole seed at
 * offset 0, then the end, nothing else (a sender's delta for a file only touched, whose rounds
 * matched all of it). Undefined for any other delta, or bytes that are not one. With it the
 * receiver checks its own file against the digest instead of writing a copy of it.
 */
export function identityDigest(delta: Uint8Array): FileDigest | undefined {
  if (delta.length > IDENTITY_DELTA_MAX_BYTES) return undefined
  try {
    const r = openFormat(delta, DELTA_MAGIC, DELTA_VERSION, 'delta')
    const seedSize = r.varint()
    // COPY's offset is a zigzag varint from the last copy's end (0 here): 0 is offset 0.
    if (seedSize === 0 || r.u8() !== OP.COPY || r.varint() !== 0 || r.varint() !== seedSize) return undefined
    if (r.u8() !== OP.END || r.varint() !== seedSize) return undefined
    const digest = Buffer.from(r.bytes(DIGEST_BYTES)).toString('hex') as FileDigest
    return r.left === 0 ? digest : undefined
  } catch {
    return undefined // Policy: not a whole identity delta; applyDelta says what is wrong with it.
  }
}
