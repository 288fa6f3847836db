import { STREAM_CHECK_BYTES } from '../hash/index.js'
import type { FileDigest } from '../types.js'
import { ByteReader, MAX_VARINT_BYTES } from './bytes.js'
import { DELTA_MAGIC, DIGEST_BYTES, DELTA_VERSION, DELTA_VERSION_FAST_CHECK, OP } from './delta-format.js'
import type { TargetCheck } from './target-check.js'

/** The most bytes a delta that copies its whole seed in place takes: magic and version, the
 *  seed's size, COPY (op, offset 0 in one byte, length), END (op, size) and the check (a
 *  SHA-256 at most). */
export const IDENTITY_DELTA_MAX_BYTES = DELTA_MAGIC.length + 1 + MAX_VARINT_BYTES + (1 + 1 + MAX_VARINT_BYTES) + (1 + MAX_VARINT_BYTES) + DIGEST_BYTES

/**
 * The check a delta ends with when it rebuilds its seed exactly: one copy of the whole seed at
 * offset 0, then the end, nothing else (a sender's delta for a file only touched, whose rounds
 * matched all of it). A SHA-256 (format version 1) or the 16 bytes of an XXH3-128 (version 2,
 * §4.11). Undefined for any other delta, or bytes that are not one. With it the receiver checks
 * its own file against the check instead of writing a copy of it.
 */
export function identityDigest(delta: Uint8Array): TargetCheck | undefined {
  if (delta.length > IDENTITY_DELTA_MAX_BYTES || !DELTA_MAGIC.every((m, i) => delta[i] === m)) return undefined
  try {
    const r = new ByteReader(delta, 'delta')
    r.pos = DELTA_MAGIC.length
    const version = r.u8()
    if (version !== DELTA_VERSION && version !== DELTA_VERSION_FAST_CHECK) return undefined
    const seedSize = r.varint()
    // COPY's offset is a zigzag varint from the last copy's end (0 here): 0 is offset 0.
    if (seedSize === 0 || r.u8() !== OP.COPY || r.varint() !== 0 || r.varint() !== seedSize) return undefined
    if (r.u8() !== OP.END || r.varint() !== seedSize) return undefined
    const check = version === DELTA_VERSION ? (Buffer.from(r.bytes(DIGEST_BYTES)).toString('hex') as FileDigest) : Uint8Array.from(r.bytes(STREAM_CHECK_BYTES))
    return r.left === 0 ? check : undefined
  } catch {
    return undefined // Policy: not a whole identity delta; applyDelta says what is wrong with it.
  }
}
