import { ensureData } from '../errors.js'
import { FINGERPRINT_BYTES, fingerprintFromBytes, fingerprintToBytes, parseFileDigest } from '../hash/index.js'
import type { Chunk, FileDigest } from '../types.js'

/** What the store knows about one file: its metadata when read, its content's digest and chunks. */
export interface FileRecord {
  readonly path: string
  readonly size: number
  readonly mtimeMs: number
  /** Permission bits (`& 0o7777`). */
  readonly mode: number
  readonly digest: FileDigest
  readonly chunks: readonly Chunk[]
  /**
   * `chunks` is the SAMPLE of the file's chunks that sampleChunks picks (offsets as in the
   * file), not all of them: what a receiver was sent of a large file and keeps, instead of
   * chunking the file it wrote again (bench/README "Speed at scale"). Seed choice, similarity
   * and the content index only ever use the sample of a large file; sampling a sample gives it
   * back.
   */
  readonly sampled?: boolean
}

/** A record as stored: the record plus the store's bookkeeping. */
export interface StoredRecord {
  readonly record: FileRecord
  /** Small number standing for the path in the content index (paths can be 4 KiB). */
  readonly id: number
  /** Read so soon after its last change that a same-size edit could keep its mtime: re-read next scan. */
  readonly racy: boolean
}

/** 1: chunks contiguous from 0; 2: a sampled list, each chunk's offset stored (f64) */
const FORMAT = 1
const FORMAT_SAMPLED = 2
const FLAG_RACY = 1
const DIGEST_BYTES = 32
// version u8, flags u8, pad u16, mode u32, size f64, mtimeMs f64, id u32, digest 32, count u32
const HEADER_BYTES = 64

/**
 * Packs a record as columns: a fixed header, then every chunk length (u32), then every
 * fingerprint (16 raw bytes). Offsets are not stored: chunks are contiguous from 0. 20 bytes per
 * chunk, about half of what a msgpack list of {offset, length, hex fp} objects takes, and it
 * decodes without building intermediate objects. A sampled list (format 2) adds every offset
 * (f64) after the fingerprints.
 */
export function encodeRecord(rec: FileRecord, id: number, racy: boolean): Buffer {
  const n = rec.chunks.length
  const sampled = rec.sampled === true
  const buf = Buffer.alloc(HEADER_BYTES + n * (4 + FINGERPRINT_BYTES + (sampled ? 8 : 0)))
  buf.writeUInt8(sampled ? FORMAT_SAMPLED : FORMAT, 0)
  buf.writeUInt8(racy ? FLAG_RACY : 0, 1)
  buf.writeUInt32LE(rec.mode, 4)
  buf.writeDoubleLE(rec.size, 8)
  buf.writeDoubleLE(rec.mtimeMs, 16)
  buf.writeUInt32LE(id, 24)
  buf.write(rec.digest, 28, DIGEST_BYTES, 'hex')
  buf.writeUInt32LE(n, 60)
  const fpBase = HEADER_BYTES + 4 * n
  const offBase = fpBase + FINGERPRINT_BYTES * n
  for (let i = 0; i < n; i++) {
    const c = rec.chunks[i]!
    buf.writeUInt32LE(c.length, HEADER_BYTES + 4 * i)
    fingerprintToBytes(c.fp, buf, fpBase + FINGERPRINT_BYTES * i)
    if (sampled) buf.writeDoubleLE(c.offset, offBase + 8 * i)
  }
  return buf
}

function isFormat(v: number): boolean {
  return v === FORMAT || v === FORMAT_SAMPLED
}

/** What a record says of its file without its chunk list: what the quick check compares. */
export interface RecordMeta {
  readonly size: number
  readonly mtimeMs: number
  readonly mode: number
  readonly digest: FileDigest
  readonly racy: boolean
}

/**
 * The header of what encodeRecord wrote, without decoding the chunk list: a scan compares every
 * file of the tree with its record, and a 1 GiB file's list is 131,072 chunks.
 */
export function decodeRecordMeta(path: string, buf: Uint8Array): RecordMeta {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength)
  ensureData(b.length >= HEADER_BYTES && isFormat(b.readUInt8(0)), `state store: record of ${path} has an unknown format`)
  const digest = parseFileDigest(b.toString('hex', 28, 28 + DIGEST_BYTES))
  ensureData(digest !== undefined, `state store: record of ${path} has a bad digest`)
  return { size: b.readDoubleLE(8), mtimeMs: b.readDoubleLE(16), mode: b.readUInt32LE(4), digest, racy: (b.readUInt8(1) & FLAG_RACY) !== 0 }
}

/** Unpacks what encodeRecord wrote. Throws BAD_DATA on bytes it did not write. */
export function decodeRecord(path: string, buf: Uint8Array): StoredRecord {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength)
  ensureData(b.length >= HEADER_BYTES && isFormat(b.readUInt8(0)), `state store: record of ${path} has an unknown format`)
  const sampled = b.readUInt8(0) === FORMAT_SAMPLED
  const n = b.readUInt32LE(60)
  ensureData(b.length === HEADER_BYTES + n * (4 + FINGERPRINT_BYTES + (sampled ? 8 : 0)), `state store: record of ${path} is truncated`)
  const digest = parseFileDigest(b.toString('hex', 28, 28 + DIGEST_BYTES))
  ensureData(digest !== undefined, `state store: record of ${path} has a bad digest`)
  const chunks: Chunk[] = new Array<Chunk>(n)
  const fpBase = HEADER_BYTES + 4 * n
  const offBase = fpBase + FINGERPRINT_BYTES * n
  let offset = 0
  for (let i = 0; i < n; i++) {
    const length = b.readUInt32LE(HEADER_BYTES + 4 * i)
    if (sampled) offset = b.readDoubleLE(offBase + 8 * i)
    chunks[i] = { offset, length, fp: fingerprintFromBytes(b, fpBase + FINGERPRINT_BYTES * i) }
    offset += length
  }
  const record: FileRecord = {
    path,
    size: b.readDoubleLE(8),
    mtimeMs: b.readDoubleLE(16),
    mode: b.readUInt32LE(4),
    digest,
    chunks,
    ...(sampled && { sampled: true }),
  }
  return { record, id: b.readUInt32LE(24), racy: (b.readUInt8(1) & FLAG_RACY) !== 0 }
}
