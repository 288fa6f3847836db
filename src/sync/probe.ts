import { chunkBytes, type ChunkParams, type Cutter } from '../chunk/index.js'
import { DsyncError } from '../errors.js'
import { fsError, openRegular } from '../fs/index.js'
import { FINGERPRINT_BYTES, fingerprintToBytes } from '../hash/index.js'
import { PROBE_KEY_BYTES } from '../net/index.js'
import { passesSample, probeFingerprints } from '../store/index.js'
import type { Chunk } from '../types.js'

/**
 * What a probe carries (PROTOCOL.md §4.6): the first PROBE_KEY_BYTES of a few of the file's
 * chunk fingerprints, for the receiver to look up in its content index before it asks for the
 * list, or for nothing and the file whole.
 */

/**
 * Keys in a probe of a file read whole: 8 × 4 bytes. A file sharing half its chunks with a file
 * of the receiver misses all 8 with probability 1/256; one sharing a quarter (no seed by the 50%
 * rule anyway) with 1/10.
 */
export const PROBE_KEYS = 8

/**
 * Files over this size are probed from windows of their bytes, not read whole (windowedProbeKeys).
 * A probe's keys came from the file's full chunk list: a new 1 GiB file was read, chunked and
 * hashed twice (SHA-256 per chunk and whole) before its first byte went, 2.0 of the 6.9 s its
 * push took with the receiver idle meanwhile, only for the receiver to find no seed and ask for
 * it whole. The same size as the sender's sketch limit: a larger file has no sketch, so its
 * probe carries no anchors, and nothing else needs all its bytes before it is sent.
 */
export const WINDOWED_PROBE_BYTES = 64 * 1024 * 1024

/** Windows read for a windowed probe, evenly spread over the file (the first at 0, the last at its end). */
const PROBE_WINDOWS = 16
/** Bytes per window (at least, and at least 4 of the largest chunks): ~128 chunks of 8 KiB, ~16 of which pass the index's sample. */
const PROBE_WINDOW_BYTES = 1024 * 1024
/**
 * Keys in a windowed probe: 32 of the ~256 sampled fingerprints the windows hold. Any stretch
 * of the file a seed shares that covers a window is found; a seed sharing a quarter of the file
 * spread through it misses all 32 with probability 0.75^32 ≈ 10^-4. False hits (4-byte keys
 * match by chance, 1 in ~540 keys on an index of a million fingerprints, PROTOCOL.md §4.6) cost
 * a chunk list asked for in vain: the full read this probe saved.
 */
const WINDOWED_PROBE_KEYS = 32
/** Chunks dropped at a window's start: their cuts depend on where the window starts, not yet on
 *  the content alone (CDC falls in step with the file's own cuts within a chunk or two). */
const EDGE_CHUNKS = 2

/** A probe's keys: the first PROBE_KEY_BYTES of each probe fingerprint. */
export function probeKeys(chunks: readonly Chunk[], count = PROBE_KEYS): Uint8Array {
  const fps = probeFingerprints(chunks, count)
  const full = new Uint8Array(FINGERPRINT_BYTES)
  const keys = new Uint8Array(fps.length * PROBE_KEY_BYTES)
  fps.forEach((fp, i) => {
    fingerprintToBytes(fp, full)
    keys.set(full.subarray(0, PROBE_KEY_BYTES), i * PROBE_KEY_BYTES)
  })
  return keys
}

/** Where windowedProbeKeys reads, or undefined when windows would not save most of a full read
 *  (large chunk settings make windows large). Fixed-size blocks start at multiples of their size. */
export function probeWindows(size: number, params: ChunkParams): { offsets: number[]; bytes: number } | undefined {
  const bytes = Math.max(PROBE_WINDOW_BYTES, 4 * (params.kind === 'cdc' ? params.max : params.avg))
  if (size <= WINDOWED_PROBE_BYTES || PROBE_WINDOWS * bytes > size / 4) return undefined
  const align = params.kind === 'cdc' ? 1 : params.avg
  const offsets: number[] = []
  for (let i = 0; i < PROBE_WINDOWS; i++) {
    const at = Math.floor((i * (size - bytes)) / (PROBE_WINDOWS - 1))
    offsets.push(at - (at % align))
  }
  return { offsets, bytes }
}

/**
 * Probe keys of a large file from PROBE_WINDOWS windows of it (16 MiB of a 1 GiB file): the
 * chunks inside each window, less those whose cuts the window's edges made, and of them only
 * fingerprints the receiver's index samples (first byte mod 8 = 0; the index's smallest-four
 * fingerprints need the whole list). Empty when the windows hold none.
 */
export async function windowedProbeKeys(
  abs: string,
  windows: { offsets: readonly number[]; bytes: number },
  cutter: Cutter,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const fh = await openRegular(abs, { noFollow: true })
  const chunks: Chunk[] = []
  try {
    const buf = Buffer.allocUnsafe(windows.bytes)
    for (const at of windows.offsets) {
      if (signal?.aborted) throw new DsyncError('ABORTED', `${abs}: probe cancelled`)
      let n = 0
      try {
        while (n < buf.length) {
          const r = await fh.read(buf, n, buf.length - n, at + n)
          if (r.bytesRead === 0) break
          n += r.bytesRead
        }
      } catch (err) {
        throw fsError(err, abs, 'read it')
      }
      const inWindow = chunkBytes(buf.subarray(0, n), cutter)
      // The last chunk ends where the window does, not at a cut of the file's.
      for (let i = at === 0 ? 0 : EDGE_CHUNKS; i < inWindow.length - 1; i++) {
        if (passesSample(inWindow[i]!.fp)) chunks.push(inWindow[i]!)
      }
    }
  } finally {
    await fh.close()
  }
  return probeKeys(chunks, WINDOWED_PROBE_KEYS)
}
