import type { Command } from 'commander'
import type { ChunkerKind } from '../../chunk/index.js'
import { measureSimilarity, type SimilarityOptions, type SimilarityResult } from '../../fs/index.js'
import { DEFAULT_METRIC, DEFAULT_THRESHOLD } from '../../similarity/index.js'
import type { CliContext } from '../context.js'
import { formatBytes, formatPercent, parseChunker, parseMetric, parseSize, parseThreshold } from '../options.js'

function formatTable(r: SimilarityResult): string {
  const m = r.metrics
  const sizes = r.chunker.kind === 'cdc' ? `min ${formatBytes(r.chunker.min)}, avg ${formatBytes(r.chunker.avg)}, max ${formatBytes(r.chunker.max)}` : `block ${formatBytes(r.chunker.avg)}`
  const rows: [string, string][] = [
    ['A', `${r.a.path}  (${formatBytes(r.a.size)}, ${r.a.chunks} chunks)`],
    ['B', `${r.b.path}  (${formatBytes(r.b.size)}, ${r.b.chunks} chunks)`],
    ['method', r.method.description],
    ['error', `± ${formatPercent(r.method.errorBound)} (95%, sampling)`],
    ['shared', `${formatBytes(m.sharedBytes)}`],
    ['jaccard', formatPercent(m.jaccard)],
    ['dice', formatPercent(m.dice)],
    ['lcs', formatPercent(m.lcs)],
    ['containment', `${formatPercent(m.containmentAinB)} of A is in B, ${formatPercent(m.containmentBinA)} of B is in A`],
    ['chunker', `${r.chunker.kind} (${sizes})`],
    ['whole chunks', `${formatBytes(r.chunkMetrics.sharedBytes)} shared, dice ${formatPercent(r.chunkMetrics.dice)}`],
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
    .description('measure how similar two files are (jaccard, dice, lcs, containment), estimated from content sketches')
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
    .action(async (a: string, b: string, o: SimilarityOptions & { json?: boolean }) => {
      const r = await measureSimilarity(a, b, o, ctx.signal)
      ctx.stdout.write(o.json ? JSON.stringify(r) + '\n' : formatTable(r))
    })
}
