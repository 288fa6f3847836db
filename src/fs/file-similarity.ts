import { BlockTable, chunkParams, sbcBaseChunks, sbcChunks, type ChunkerKind, type ChunkParams } from '../chunk/index.js'
import { DsyncError } from '../errors.js'
import { compare, encodeSketch, estimateSimilarity, LONG_WINDOW, profile, type MetricName, type SimilarityReport } from '../similarity/index.js'
import type { Chunk } from '../types.js'
import { chunkPath } from './chunk-path.js'
import { openFileSource, regularFileSize } from './file-source.js'
import { sketchPath } from './sketch-path.js'

/** How `measureSimilarity` cuts and judges (the options of `dsync similarity`). */
export interface SimilarityOptions {
  chunker: ChunkerKind
  avg?: number
  min?: number
  max?: number
  metric: MetricName
  threshold: number
}

/** How the metrics were estimated, and how far off they may be. */
export interface EstimateMethod {
  readonly kind: 'sketch'
  /** one line for people: what was compared */
  readonly description: string
  /** ± this (0..1) holds each metric with ~95% probability (sampling error) */
  readonly errorBound: number
  /** positions sampled: one in 2^level */
  readonly level: number
  readonly anchors: { readonly a: number; readonly b: number }
  readonly sketchBytes: { readonly a: number; readonly b: number }
}

/** What `dsync similarity` measured: the data behind both the table and --json. */
export interface SimilarityResult {
  readonly a: { readonly path: string; readonly size: number; readonly chunks: number }
  readonly b: { readonly path: string; readonly size: number; readonly chunks: number }
  readonly chunker: { readonly kind: ChunkerKind; readonly min: number; readonly avg: number; readonly max: number }
  /** every metric, estimated from the sketches (sharedBytes: dice × (|A| + |B|) / 2) */
  readonly metrics: SimilarityReport
  readonly method: EstimateMethod
  /** the same metrics over whole transfer chunks (what a delta's COPY ops can reuse as is) */
  readonly chunkMetrics: SimilarityReport
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
  const chunkMetrics = compare(profile(chunksA!), profile(chunksB!))
  const [sa, sb] = [await sketchPath(a, { signal, windows: true }), await sketchPath(b, { signal, windows: true })]
  const e = estimateSimilarity(sa, sb)
  const metrics: SimilarityReport = {
    jaccard: e.jaccard,
    dice: e.dice,
    lcs: e.lcs,
    containmentAinB: e.containmentAinB,
    containmentBinA: e.containmentBinA,
    sharedBytes: Math.round((e.dice * (sizeA + sizeB)) / 2),
  }
  const method: EstimateMethod = {
    kind: 'sketch',
    description:
      e.anchorsA + e.anchorsB === 0
        ? `files under ${LONG_WINDOW} bytes: compared whole`
        : `sketch: ${LONG_WINDOW}-byte windows at content-chosen positions (1 in ${2 ** e.level}), ` +
          `${e.anchorsA} + ${e.anchorsB} anchors, edge-corrected with 32-byte windows`,
    errorBound: e.errorBound,
    level: e.level,
    anchors: { a: e.anchorsA, b: e.anchorsB },
    sketchBytes: { a: encodeSketch(sa).length, b: encodeSketch(sb).length },
  }
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
    method,
    chunkMetrics,
    rule: { metric: o.metric, threshold: o.threshold },
    similarity,
    verdict: similarity >= o.threshold ? 'delta' : 'whole',
  }
}
