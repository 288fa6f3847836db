import { createHash, hash as cryptoHash, type Hash } from 'node:crypto'

/** A whole-file digest: SHA-256 of all the file's bytes, 64 lowercase hex digits. */
export type FileDigest = string & { readonly __brand: 'FileDigest' }

const HEX_RE = /^[0-9a-f]{64}$/

/** Incremental whole-file digest: feed bytes in order with `update`, then `digest` once. */
export class FileDigester {
  readonly #hash: Hash = createHash('sha256')
  update(data: Uint8Array): void {
    this.#hash.update(data)
  }
  digest(): FileDigest {
    return this.#hash.digest('hex') as FileDigest
  }
}

/** Digest of bytes already in memory: in one call (a Hash object each cost ~2 µs more, on every
 *  small file a sender lists). */
export function digestBytes(data: Uint8Array): FileDigest {
  return cryptoHash('sha256', data, 'hex') as FileDigest
}

/** Digest of a stream of buffers (read in order). */
export async function digestStream(source: AsyncIterable<Uint8Array>): Promise<FileDigest> {
  const d = new FileDigester()
  for await (const buf of source) d.update(buf)
  return d.digest()
}

/** Checks a string from outside and brands it; undefined when malformed. */
export function parseFileDigest(s: string): FileDigest | undefined {
  return HEX_RE.test(s) ? (s as FileDigest) : undefined
}

/** SHA-256 of strings (UTF-8) one after another, as raw bytes: directory summaries hash their
 *  entries' records with it (src/sync/tree-summary.ts). */
export function sha256OfStrings(parts: Iterable<string>): Uint8Array {
  const h = createHash('sha256')
  for (const p of parts) h.update(p)
  return h.digest()
}
