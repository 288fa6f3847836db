import { digestBytes } from '../hash/index.js'

/** Paths up to this many UTF-8 bytes are their own key; longer ones (up to 4096) are keyed by
 *  their SHA-256, because lmdb keys stop at 1978 bytes. */
const MAX_PLAIN_KEY_BYTES = 1024

/** The store key of a path: its UTF-8 bytes, or 0x00 + SHA-256 when long (no path starts with NUL). */
export function pathKey(path: string): Buffer {
  const plain = Buffer.from(path)
  if (plain.length <= MAX_PLAIN_KEY_BYTES) return plain
  return Buffer.concat([Buffer.of(0), Buffer.from(digestBytes(plain), 'hex')])
}
