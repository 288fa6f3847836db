import { DsyncError } from '../errors.js'

/** The chunkers that cut a file on its own (SBC is relative to known blocks: see sbc.ts). */
export type CutterKind = 'cdc' | 'fsp'
/** Every chunker `dsync similarity --chunker` accepts. */
export type ChunkerKind = CutterKind | 'sbc'
export const CHUNKER_KINDS: readonly ChunkerKind[] = Object.freeze(['cdc', 'fsp', 'sbc'])

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
 * Why 8 KiB (bench/chunk.ts "avg size" table on the delta classes): 4 KiB sends ~10% fewer
 * literal bytes on scattered edits but doubles the fingerprint list (20 B/chunk on the wire,
 * 0.25% of the file at 8 KiB); 16 KiB and up lose more in literals than they save in list.
 * Finer edits inside a chunk are recovered by the delta engine's block search, not by
 * smaller chunks.
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
