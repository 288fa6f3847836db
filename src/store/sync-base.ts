import { ensureData } from '../errors.js'
import type { FileDigest } from '../types.js'

/**
 * What a path last synced as, on this side: the version both sides agreed on. Conflict detection
 * and --delete compare a file with it. The digest is known when this side wrote the file or had
 * read it; size and mtime are always known since dsync 0.2. A first sync of trees that already
 * match (copied with cp -a or rsync) reads no file: it records only size and mtime, as rsync's
 * quick check would compare them.
 */
export interface SyncBase {
  readonly digest?: FileDigest
  readonly size?: number
  readonly mtimeMs?: number
}

/** A version of a file as a side knows it: always its size and mtime, its digest when read. */
export interface FileVersion {
  readonly size: number
  readonly mtimeMs: number
  readonly digest?: FileDigest
}

const DIGEST_BYTES = 32
const STAT_BYTES = 16

/** Times are compared to the millisecond: utimes() goes through a double of seconds, which
 *  cannot hold every nanosecond, and file systems differ below that. */
export function sameMtime(a: number, b: number): boolean {
  return Math.abs(a - b) < 1
}

/**
 * Whether `v` is the version recorded as `base`: by digest when both are known (content is what
 * counts), else by size and mtime (the quick check's rule). Unknown when neither pair is
 * comparable: then false, so the caller keeps what it cannot prove it may replace.
 */
export function isBase(v: FileVersion, base: SyncBase | undefined): boolean {
  if (base === undefined) return false
  if (v.digest !== undefined && base.digest !== undefined) return v.digest === base.digest
  if (base.size === undefined || base.mtimeMs === undefined) return false
  return v.size === base.size && sameMtime(v.mtimeMs, base.mtimeMs)
}

/** 32 bytes (digest: the format before 0.2), 48 (digest, size, mtime) or 16 (size, mtime). */
export function encodeBase(b: SyncBase): Buffer {
  const stat = b.size !== undefined && b.mtimeMs !== undefined
  const buf = Buffer.alloc((b.digest !== undefined ? DIGEST_BYTES : 0) + (stat ? STAT_BYTES : 0))
  ensureData(buf.length > 0, 'state store: a sync base needs a digest or a size and mtime')
  let at = 0
  if (b.digest !== undefined) at = buf.write(b.digest, 0, DIGEST_BYTES, 'hex')
  if (stat) {
    buf.writeDoubleLE(b.size!, at)
    buf.writeDoubleLE(b.mtimeMs!, at + 8)
  }
  return buf
}

/** Whether the stored base `raw` has a size and mtime, and they are `v`'s (the quick check):
 *  decodeBase's answer without building the base (a no-op of 100,000 files asks it of each). */
export function baseHasStat(raw: Uint8Array, v: { readonly size: number; readonly mtimeMs: number }): boolean {
  if (raw.length !== STAT_BYTES && raw.length !== DIGEST_BYTES + STAT_BYTES) return false
  const b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  return b.readDoubleLE(raw.length - STAT_BYTES) === v.size && sameMtime(b.readDoubleLE(raw.length - 8), v.mtimeMs)
}

export function decodeBase(path: string, raw: Uint8Array): SyncBase {
  const b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  ensureData(b.length === DIGEST_BYTES || b.length === STAT_BYTES || b.length === DIGEST_BYTES + STAT_BYTES, `state store: the sync base of ${path} has an unknown format`)
  // 32 bytes always make 64 lowercase hex digits: no check to run (a regex per base was 0.05 s
  // of a no-op of 100,000 files).
  const digest = b.length === STAT_BYTES ? undefined : (b.toString('hex', 0, DIGEST_BYTES) as FileDigest)
  if (b.length === DIGEST_BYTES) return { digest: digest! }
  const at = b.length - STAT_BYTES
  return { ...(digest !== undefined && { digest }), size: b.readDoubleLE(at), mtimeMs: b.readDoubleLE(at + 8) }
}
