import type { Command } from 'commander'
import { DEFAULT_METRIC, DEFAULT_THRESHOLD, type ChunkerKind } from '../../choices.js'
import type { SimilarityOptions } from '../../fs/index.js'
import type { CliContext } from '../context.js'
import { parseChunker, parseMetric, parseSize, parseThreshold } from '../options.js'

export type SimilarityCliOptions = SimilarityOptions & { json?: boolean }

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
    .action(async (a: string, b: string, o: SimilarityCliOptions) => {
      const { runSimilarity } = await import('../actions/similarity.js')
      await runSimilarity(ctx, a, b, o)
    })
}
