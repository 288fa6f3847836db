import { createRequire } from 'node:module'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { DsyncError } from '../errors.js'

/**
 * How a literal frame's bytes are stored. The id travels in the delta format (protocol/DELTA.md),
 * so a reader knows how to undo it whatever the writer had available.
 */
export const CODEC = Object.freeze({ STORED: 0, ZSTD: 1, DEFLATE: 2 })
export type CodecId = (typeof CODEC)[keyof typeof CODEC]

/** Binding of zstd-napi we use: one-shot compress and decompress into caller-sized buffers. */
interface ZstdBinding {
  compress(dst: Uint8Array, src: Uint8Array, level: number): number
  decompress(dst: Uint8Array, src: Uint8Array): number
  compressBound(srcSize: number): number
}

function loadZstd(): ZstdBinding | null {
  // zstd-napi is native (compiled at install); where it failed to build, literals fall back to
  // deflate, and the codec id in each frame tells the reader which one was used.
  try {
    return createRequire(import.meta.url)('zstd-napi/binding.js') as ZstdBinding
  } catch (err) {
    if (err instanceof Error) return null
    throw err
  }
}

const ZSTD: ZstdBinding | null = loadZstd()

/**
 * zstd level for literals. Measured here on 1 MiB frames (zstd-napi 0.0.13, loaded 2-core box):
 * 16 MiB of a synthetic server log: level 1 368 MB/s 7.3×, level 3 215 MB/s 6.9×, level 6
 * 72 MB/s 6.9×, level 9 42 MB/s 7.1×; 1.3 MB of source-like text: level 1 4.7×, level 3 5.1×,
 * level 6 5.1×. Level 3: the best ratio on code-like text before the speed falls off a cliff.
 * Measured again with the version-3 delta engine (1 MiB frames, per CPU second, load ~4.5, two
 * runs each): code-like text (bench codeText, 8 MiB) level 3 2 063 152 B at 101–135 MB/s,
 * level 6 1 932 605 B (-6.3%) at 37–48 MB/s; log (4 MiB) level 3 954 560 B at 130–170 MB/s,
 * level 6 839 167 B (-12%) at 54–60 MB/s; random (stored anyway) 712–1487 vs 198–509 MB/s.
 * Level 6 would make literal compression the costliest step of a delta (the 60/40 class's
 * 8.3 MB of literals: ~+120 ms CPU for -130 KB, against 300 ms for the whole delta) and of
 * every whole-file send (~50 MB/s per CPU second, below a gigabit link), so level 3 stays;
 * level 6 pays only on links slower than ~100 Mbit/s.
 */
export const DEFAULT_LEVEL = 3

/** True when zstd is available on this machine (else literals use deflate). */
export function hasZstd(): boolean {
  return ZSTD !== null
}

/** One compressed frame: the codec used and the stored bytes. */
export interface Frame {
  readonly codec: CodecId
  readonly data: Uint8Array
}

/**
 * Compresses one frame of literal bytes with zstd (deflate where zstd is missing), or keeps them
 * as they are when compression would not make them smaller (random data, tiny frames).
 */
export function compressFrame(raw: Uint8Array, opts: { level?: number; codec?: CodecId } = {}): Frame {
  const want = opts.codec ?? (ZSTD !== null ? CODEC.ZSTD : CODEC.DEFLATE)
  let packed: Uint8Array | null = null
  if (want === CODEC.ZSTD && ZSTD !== null) {
    const dst = Buffer.allocUnsafe(ZSTD.compressBound(raw.length))
    packed = dst.subarray(0, ZSTD.compress(dst, raw, opts.level ?? DEFAULT_LEVEL))
  } else if (want !== CODEC.STORED) {
    packed = deflateRawSync(raw, { level: 6 })
  }
  if (packed === null || packed.length >= raw.length) return { codec: CODEC.STORED, data: raw }
  return { codec: want === CODEC.ZSTD && ZSTD !== null ? CODEC.ZSTD : CODEC.DEFLATE, data: packed }
}

/**
 * Undoes `compressFrame`. `rawLength` is the size the frame header declared: the output buffer
 * is allocated at that size (the caller bounds it), and a frame that decodes to any other size
 * is rejected, so a hostile frame cannot make the reader allocate more than it said.
 */
export function decompressFrame(codec: number, data: Uint8Array, rawLength: number): Uint8Array {
  const bad = (why: string, cause?: unknown): never => {
    throw new DsyncError('BAD_DATA', `corrupt literal frame: ${why}`, { cause })
  }
  if (codec === CODEC.STORED) {
    if (data.length !== rawLength) bad(`stored frame of ${data.length} bytes declared ${rawLength}`)
    return data
  }
  if (codec === CODEC.ZSTD) {
    if (ZSTD === null) {
      throw new DsyncError('BAD_DATA', 'the delta uses zstd, which failed to load on this machine; reinstall dsync (npm rebuild zstd-napi)')
    }
    const out = new Uint8Array(rawLength)
    let n = -1
    try {
      n = ZSTD.decompress(out, data)
    } catch (err) {
      bad('zstd cannot decode it', err)
    }
    if (n !== rawLength) bad(`zstd frame decoded to ${n} bytes, declared ${rawLength}`)
    return out
  }
  if (codec === CODEC.DEFLATE) {
    let out: Uint8Array = new Uint8Array(0)
    try {
      // maxOutputLength: inflate stops (and throws) past the declared size instead of growing.
      out = inflateRawSync(data, { maxOutputLength: Math.max(1, rawLength) })
    } catch (err) {
      bad('deflate cannot decode it', err)
    }
    if (out.length !== rawLength) bad(`deflate frame decoded to ${out.length} bytes, declared ${rawLength}`)
    return out
  }
  return bad(`unknown codec id ${codec}`)
}
