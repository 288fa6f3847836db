import type { Command } from 'commander'
import { BlockTable, chunkParams, sbcBaseChunks, sbcChunks, type ChunkerKind, type ChunkParams } from '../../chunk/index.js'
import { DsyncError } from '../../errors.js'
import { chunkPath, openFileSource, regularFileSize } from '../../fs/index.js'
import {
  compare,
  DEFAULT_METRIC,
  DEFAULT_THRESHOLD,
  profile,
  type MetricName,
  type SimilarityReport,
} from '../../similarity/index.js'
import type { Chunk } from '../../types.js'
import type { CliContext } from '../context.js'
import { formatBytes, formatPercent, parseChunker, parseMetric, parseSize, parseThreshold } from '../options.js'

interface SimilarityOptions {
  chunker: ChunkerKind
  avg?: number
  min?: number
  max?: number
  metric: MetricName
  threshold: number
  json?: boolean
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

function formatTable(r: SimilarityResult): string {
  const m = r.metrics
  const sizes = r.chunker.kind === 'cdc' ? `min ${formatBytes(r.chunker.min)}, avg ${formatBytes(r.chunker.avg)}, max ${formatBytes(r.chunker.max)}` : `block ${formatBytes(r.chunker.avg)}`
  const rows: [string, string][] = [
    ['A', `${r.a.path}  (${formatBytes(r.a.size)}, ${r.a.chunks} chunks)`],
    ['B', `${r.b.path}  (${formatBytes(r.b.size)}, ${r.b.chunks} chunks)`],
    ['chunker', `${r.chunker.kind} (${sizes})`],
    ['shared', `${formatBytes(m.sharedBytes)}`],
    ['jaccard', formatPercent(m.jaccard)],
    ['dice', formatPercent(m.dice)],
    ['lcs', formatPercent(m.lcs)],
    ['containment', `${formatPercent(m.containmentAinB)} of A is in B, ${formatPercent(m.containmentBinA)} of B is in A`],
  ]
  const w = Math.max(...rows.map(([k]) => k.length))
  const verdict =
    r.verdict === 'delta'
      ? `delta would pay: ${r.rule.metric} ${formatPercent(r.similarity)} ≥ ${formatPercent(r.rule.threshold)}`
      : `send whole file: ${r.rule.metric} ${formatPercent(r.similarity)} < ${formatPercent(r.rule.threshold)}`
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + `\nverdict: ${verdict}\n`
}

export function registerSimilarity(program: Command, ctx: CliContext): void {
  program
    .command('similarity')
    .description('measure how similar two files are (jaccard, dice, lcs, containment over chunk fingerprints)')
    .argument('<a>', 'first file (the seed)')
    .argument('<b>', 'second file (the target)')
    .option('--chunker <kind>', 'chunker: cdc, fsp or sbc', parseChunker, 'cdc' as ChunkerKind)
    .option('--avg <size>', 'average chunk size (block size for fsp/sbc), e.g. 8k, 1M', parseSize)
    .option('--min <size>', 'minimum chunk size for cdc (default avg/4)', parseSize)
    .option('--max <size>', 'maximum chunk size for cdc (default avg*8)', parseSize)
    .option('--metric <name>', 'metric for the verdict: jaccard, dice, lcs, containment', parseMetric, DEFAULT_METRIC)
    .option('--threshold <ratio>', 'delta pays at or above this similarity (0.5 or 50%)', parseThreshold, DEFAULT_THRESHOLD)
    .option('--json', 'print one JSON object instead of the table')
    .addHelpText(
      'after',
      '\nExamples:\n  dsync similarity old.txt new.txt\n  dsync similarity --chunker sbc --avg 4k --json a.bin b.bin\n',
    )
    .action(async (a: string, b: string, o: SimilarityOptions) => {
      const r = await measureSimilarity(a, b, o, ctx.signal)
      ctx.stdout.write(o.json ? JSON.stringify(r) + '\n' : formatTable(r))
    })
}
