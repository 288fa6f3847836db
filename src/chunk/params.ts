import type { CutterKind } from '../choices.js'
import { DsyncError } from '../errors.js'

// The chunker kinds live in the leaf ../choices.ts (the CLI's options read them without loading
// this layer).
export { type CutterKind, type ChunkerKind, CHUNKER_KINDS } from '../choices.js'

/** Chunk sizes in bytes. For FSP and SBC only `avg` matters (the block size). */
export interface ChunkParams {
  readonly kind: CutterKind
  readonly min: number
  readonly avg: number
  readonly max: number
}

/** Hard limits: chunks below 64 B cost more in metadata than they save; above 16 MiB the
 *  stream buffer (2 × max) stops being small. */
export const CHUNK_LIMITS = Object.freeze({ minAvg: 64, maxAvg: 4 * 1024 * 1024, maxMax: 16 * 1024 * 1024 })

/**
 * Defaults: avg 8 KiB, min avg/4, max avg×8 (the FastCDC paper's ratios).
 * Why 8 KiB: the fingerprint list costs 20 B/chunk on the wire. bench/chunk.ts "average
 * chunk size" table (64 MiB, then 256 scattered edits of 1–100 B): the list is 0.21% of the
 * file at 8 KiB (0.43% at 4 KiB, 0.86% at 2 KiB), and the chunks the edits touch hold 2.7 MiB
 * at 8 KiB against 1.3 MiB at 4 KiB and 5.2 MiB at 16 KiB. Touched chunks are not sent
 * whole: the delta engine's block search recovers their unchanged bytes (its literal figures
 * per avg belong in bench/delta.ts), while the list, the index and the per-chunk hashing
 * calls grow as 1/avg.
 */
export const DEFAULT_AVG = 8 * 1024

/** Builds and checks chunk params; unset min/max follow the avg. Throws USAGE on nonsense. */
export function chunkParams(opts: { kind?: CutterKind; avg?: number; min?: number; max?: number } = {}): ChunkParams {
  const kind = opts.kind ?? 'cdc'
  const avg = opts.avg ?? DEFAULT_AVG
  const min = opts.min ?? Math.max(1, Math.floor(avg / 4))
  const max = opts.max ?? avg * 8
  const bad = (what: string): never => {
    throw new DsyncError('USAGE', `invalid chunk sizes: ${what}`)
  }
  for (const [name, v] of [['avg', avg], ['min', min], ['max', max]] as const) {
    if (!Number.isSafeInteger(v) || v <= 0) bad(`--${name} must be a positive whole number of bytes, got ${v}`)
  }
  if (avg < CHUNK_LIMITS.minAvg || avg > CHUNK_LIMITS.maxAvg) {
    bad(`--avg must be between ${CHUNK_LIMITS.minAvg} and ${CHUNK_LIMITS.maxAvg} bytes, got ${avg}`)
  }
  if (kind === 'cdc' && !(min <= avg && avg <= max)) bad(`need min ≤ avg ≤ max, got ${min} / ${avg} / ${max}`)
  if (max > CHUNK_LIMITS.maxMax) bad(`--max must be at most ${CHUNK_LIMITS.maxMax} bytes, got ${max}`)
  return Object.freeze({ kind, min, avg, max: kind === 'fsp' ? avg : max })
}

export const DEFAULT_CHUNK_PARAMS: ChunkParams = chunkParams()
