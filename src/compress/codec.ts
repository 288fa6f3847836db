import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { DsyncError } from '../errors.js'
import { looksIncompressible } from './incompressible.js'
import { loadZstdBackends, type ZstdBackend } from './zstd-backend.js'
import { frameContentSize } from './zstd-header.js'

/**
 * How a literal frame's bytes are stored. The id travels in the delta format (protocol/DELTA.md),
 * so a reader knows how to undo it whatever the writer had available.
 */
export const CODEC = Object.freeze({ STORED: 0, ZSTD: 1, DEFLATE: 2 })
export type CodecId = (typeof CODEC)[keyof typeof CODEC]

/**
 * The zstd used here: Node's own where the running Node has it (22.15+), else libzstd as
 * WebAssembly from an npm package; both install with nothing to compile or download. Measured
 * on this 2-core box (bench/compress.ts and bench/README.md; level 3, 1 MiB frames, 16 MiB,
 * MB per CPU second, load 13-22): code-like text (ratio 4.06 for all) compress / decompress:
 * node:zlib (Node 24) 122-173 / 438-628, wasm 65-100 / 134-488, the zstd-napi binding we used (it
 * compiled at install) 171-194 / 734-1066; random data compress: node:zlib 618-1678, wasm 167-374,
 * zstd-napi 708-1445. The wasm backend is about half as fast at compressing text: on Node 20
 * a whole-file send of text runs ~100 MB/s per CPU second instead of ~190. Where neither loads
 * (no WebAssembly), literals go out as deflate, and the codec id in each frame tells the reader.
 */
/** The zstd preferred here and the one that takes a dictionary (the wasm one: Node's own takes
 *  none before 24.x); null where none loads. Undefined until loadCodecs() has resolved. */
let backends: { readonly zstd: ZstdBackend | null; readonly zstdDict: NonNullable<ZstdBackend['withDictionary']> | null } | undefined
let loading: Promise<void> | undefined

/**
 * Loads zstd: once, later calls return the first call's promise. Every entry point awaits it
 * before its first frame: the CLI's main(), the library's index, the bench and the tests'
 * set-up (test/support/setup.ts, which .taprc preloads). Not a top-level await in this module,
 * as it was: the CLI runs as one CommonJS script whose compiled code V8 keeps between runs
 * (src/cli/code-cache.ts), and a script has no top-level await.
 */
export function loadCodecs(): Promise<void> {
  loading ??= loadZstdBackends().then((found) => {
    backends = { zstd: found[0] ?? null, zstdDict: found.find((b) => b.withDictionary !== undefined)?.withDictionary ?? null }
  })
  return loading
}

/** The zstd backends loaded, preferred first; a bug (INTERNAL) before loadCodecs() has resolved. */
function loadedBackends(): NonNullable<typeof backends> {
  if (backends === undefined) throw new DsyncError('INTERNAL', 'compression used before its codecs were loaded: await loadCodecs() at the entry point')
  return backends
}

/**
 * zstd level for literals. Measured here on 1 MiB frames (with zstd-napi 0.0.13, our backend then,
 * and libzstd is the same library in every backend; loaded 2-core box):
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
  return loadedBackends().zstd !== null
}

/** The zstd backend in use (`node:zlib`, `wasm`), or null when literals use deflate. */
export function zstdBackendName(): string | null {
  return loadedBackends().zstd?.name ?? null
}

/** One compressed frame: the codec used and the stored bytes. */
export interface Frame {
  readonly codec: CodecId
  readonly data: Uint8Array
}

/**
 * Slices of a thin probe (`thinProbe`, for a stream whose frames have all looked random so far):
 * 8 of 1 KiB per 1 MiB frame, one every ~146 KiB, instead of 32. The probe was 0.3 ms of every
 * 1 MiB frame (0.3–0.5 of the sender's ~3.5 CPU s on a new 1 GiB file); thin, 0.08 ms. A
 * compressible stretch of ≥ 147 KiB is still seen; any frame found compressible sends the
 * stream back to the full probe, and every 8th frame is probed in full anyway (DeltaWriter).
 */
const THIN_PROBE_SLICES = 8

/**
 * Compresses one frame of literal bytes with zstd (deflate where zstd is missing), or keeps them
 * as they are when compression would not make them smaller (random data, tiny frames). A frame
 * the probe finds incompressible (looksIncompressible) is stored without trying: a 1 MiB frame
 * of random bytes then costs ~0.1 ms instead of ~9 ms of zstd (WebAssembly backend).
 */
export function compressFrame(raw: Uint8Array, opts: { level?: number; codec?: CodecId; dictionary?: Uint8Array; thinProbe?: boolean } = {}): Frame {
  const { zstd, zstdDict } = loadedBackends()
  const want = opts.codec ?? (zstd !== null ? CODEC.ZSTD : CODEC.DEFLATE)
  if (want !== CODEC.STORED && opts.codec === undefined && looksIncompressible(raw, opts.thinProbe === true ? THIN_PROBE_SLICES : undefined)) {
    return { codec: CODEC.STORED, data: raw }
  }
  // A dictionary (raw content the reader has too: decompressFrame must be given the same one)
  // makes what repeats it cost little. Where zstd cannot take one, deflate can.
  const dict = opts.dictionary !== undefined && opts.dictionary.length > 0 ? opts.dictionary : undefined
  let packed: Uint8Array | null = null
  if (want === CODEC.ZSTD && zstd !== null && dict === undefined) {
    packed = zstd.compress(raw, opts.level ?? DEFAULT_LEVEL)
  } else if (want === CODEC.ZSTD && zstdDict !== null && dict !== undefined) {
    packed = zstdDict.compress(raw, dict, opts.level ?? DEFAULT_LEVEL)
  } else if (want !== CODEC.STORED) {
    packed = deflateRawSync(raw, { level: 6, ...(dict !== undefined && { dictionary: dict }) })
  }
  if (packed === null || packed.length >= raw.length) return { codec: CODEC.STORED, data: raw }
  const usedZstd = want === CODEC.ZSTD && (dict === undefined ? zstd !== null : zstdDict !== null)
  return { codec: usedZstd ? CODEC.ZSTD : CODEC.DEFLATE, data: packed }
}

/**
 * Undoes `compressFrame`. `rawLength` is the size the frame header declared: the output buffer
 * is allocated at that size (the caller bounds it), and a frame that decodes to any other size
 * is rejected, so a hostile frame cannot make the reader allocate more than it said.
 */
export function decompressFrame(codec: number, data: Uint8Array, rawLength: number, dictionary?: Uint8Array): Uint8Array {
  const dict = dictionary !== undefined && dictionary.length > 0 ? dictionary : undefined
  const { zstd, zstdDict } = loadedBackends()
  const bad = (why: string, cause?: unknown): never => {
    throw new DsyncError('BAD_DATA', `corrupt literal frame: ${why}`, { cause })
  }
  if (codec === CODEC.STORED) {
    if (data.length !== rawLength) bad(`stored frame of ${data.length} bytes declared ${rawLength}`)
    return data
  }
  if (codec === CODEC.ZSTD) {
    if (zstd === null) {
      throw new DsyncError('BAD_DATA', 'the delta uses zstd, which cannot load on this machine (no WebAssembly?); run dsync on Node 22.15 or newer, or without --jitless')
    }
    const declared = frameContentSize(data)
    if (declared === 'bad') bad('not a zstd frame')
    if (declared !== 'unknown' && declared !== rawLength) bad(`zstd frame header says ${declared} bytes, declared ${rawLength}`)
    if (dict !== undefined && zstdDict === null) {
      throw new DsyncError('BAD_DATA', 'the frame uses a zstd dictionary, which this machine\'s zstd cannot take; run dsync on Node 20 or newer with WebAssembly')
    }
    let out: Uint8Array = new Uint8Array(0)
    try {
      out = dict === undefined ? zstd.decompress(data, rawLength) : zstdDict!.decompress(data, dict, rawLength)
    } catch (err) {
      bad('zstd cannot decode it', err)
    }
    if (out.length !== rawLength) bad(`zstd frame decoded to ${out.length} bytes, declared ${rawLength}`)
    return out
  }
  if (codec === CODEC.DEFLATE) {
    let out: Uint8Array = new Uint8Array(0)
    try {
      // maxOutputLength: inflate stops (and throws) past the declared size instead of growing.
      out = inflateRawSync(data, { maxOutputLength: Math.max(1, rawLength), ...(dict !== undefined && { dictionary: dict }) })
    } catch (err) {
      bad('deflate cannot decode it', err)
    }
    if (out.length !== rawLength) bad(`deflate frame decoded to ${out.length} bytes, declared ${rawLength}`)
    return out
  }
  return bad(`unknown codec id ${codec}`)
}
