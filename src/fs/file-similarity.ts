import { BlockTable, chunkParams, sbcBaseChunks, sbcChunks, type ChunkerKind, type ChunkParams } from '../chunk/index.js'
import { DsyncError } from '../errors.js'
import { compare, profile, type MetricName, type SimilarityReport } from '../similarity/index.js'
import type { Chunk } from '../types.js'
import { chunkPath } from './chunk-path.js'
import { openFileSource, regularFileSize } from './file-source.js'

/** How `measureSimilarity` cuts and judges (the options of `dsync similarity`). */
export interface SimilarityOptions {
  chunker: ChunkerKind
  avg?: number
  min?: number
  max?: number
  metric: MetricName
  threshold: number
}

/** What `dsync similarity` measured: the data behind both the table and --json. */
export interface SimilarityResult {
  readonly a: { readonly path: string; readonly size: number; readonly chunks: number }
  readonly b: { readonly path: string; readonly size: number; readonly chunks: number }
  readonly chunker: { readonly kind: ChunkerKind; readonly min: number; readonly avg: number; readonly max: number }
  readonly metrics: SimilarityReport
  readonly rule: { readonly metric: MetricName; readonly threshold: number }
  readonly similarity: number
  readonly verdict: 'delta' | 'whole'
}

async function nonEmptyFile(path: string): Promise<number> {
  const size = await regularFileSize(path)
  if (size === 0) {
    throw new DsyncError('EMPTY_FILE', `${path}: file is empty; similarity needs content to compare`, { path })
  }
  return size
}

async function chunkBoth(a: string, b: string, kind: ChunkerKind, params: ChunkParams, signal: AbortSignal) {
  if (kind !== 'sbc') return [(await chunkPath(a, params, { signal })).chunks, (await chunkPath(b, params, { signal })).chunks]
  // SBC is relative: B is cut against A's blocks.
  const table = new BlockTable(params.avg)
  const ca: Chunk[] = await sbcBaseChunks(openFileSource(a, { signal }), table, { signal })
  const cb: Chunk[] = await sbcChunks(openFileSource(b, { signal }), table, { signal })
  return [ca, cb]
}

/** Measures how similar two files are, by every metric. */
export async function measureSimilarity(a: string, b: string, o: SimilarityOptions, signal: AbortSignal): Promise<SimilarityResult> {
  const [sizeA, sizeB] = [await nonEmptyFile(a), await nonEmptyFile(b)]
  const params = chunkParams({ kind: o.chunker === 'fsp' || o.chunker === 'sbc' ? 'fsp' : 'cdc', avg: o.avg, min: o.min, max: o.max })
  const [chunksA, chunksB] = await chunkBoth(a, b, o.chunker, params, signal)
  const metrics = compare(profile(chunksA!), profile(chunksB!))
  const similarity = {
    jaccard: metrics.jaccard,
    dice: metrics.dice,
    lcs: metrics.lcs,
    containment: metrics.containmentBinA, // how much of B (the target) A (the seed) supplies
  }[o.metric]
  return {
    a: { path: a, size: sizeA, chunks: chunksA!.length },
    b: { path: b, size: sizeB, chunks: chunksB!.length },
    chunker: { kind: o.chunker, min: params.min, avg: params.avg, max: params.max },
    metrics,
    rule: { metric: o.metric, threshold: o.threshold },
    similarity,
    verdict: similarity >= o.threshold ? 'delta' : 'whole',
  }
}
