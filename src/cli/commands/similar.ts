import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { DEFAULT_METRIC, MAX_QUERY_TOP, type MetricName } from '../../choices.js'
import type { CliContext } from '../context.js'
import { parseMetric, parseThreshold } from '../options.js'
import { addConnectionOptions, type ConnectionCliOptions } from './sync-options.js'

export interface SimilarCliOptions extends ConnectionCliOptions {
  top: number
  threshold: number
  metric: MetricName
  json?: boolean
  scan: boolean
}

function parseTop(text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1 || n > MAX_QUERY_TOP) throw new InvalidArgumentError(`"${text}" is not a count; write a whole number from 1 to ${MAX_QUERY_TOP}`)
  return n
}

export function registerSimilar(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('similar')
    .description('list the files in a tree most similar to a file (sif one-against-all, from the tree\'s index)')
    .argument('<file>', 'the file to match')
    .argument('[dir]', 'the tree to search (default: the tree FILE is in: the nearest folder with .dsync/, else its folder), or a served tree: ws://host:port/path, wss://…, ssh://host/path')
    .option('--top <n>', `show at most N files (at most ${MAX_QUERY_TOP})`, parseTop, 10)
    .option('--threshold <ratio>', 'only files at or above this similarity (0.25 or 25%)', parseThreshold, 0.25)
    .option('--metric <name>', 'rank by jaccard, dice, lcs or containment (how much of FILE the other holds)', parseMetric, DEFAULT_METRIC)
    .option('--no-scan', 'query the index as it is: do not bring it up to date first')
    .option('--json', 'print one JSON object')
  addConnectionOptions(cmd)
    .addHelpText(
      'after',
      '\nExamples:\n  dsync similar notes/plan.md\n  dsync similar --top 3 --metric containment draft.txt ~/docs --json\n' +
        '  dsync similar draft.txt ws://work.example:8730/docs --token-file ~/.dsync-token\n',
    )
    .action(async (fileArg: string, dirArg: string | undefined, o: SimilarCliOptions) => {
      const { runSimilar } = await import('../actions/similar.js')
      await runSimilar(ctx, fileArg, dirArg, o)
    })
}
