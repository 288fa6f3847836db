import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { relative, sep } from 'node:path'
import { regularFileSize, sketchPath } from '../../fs/index.js'
import { DEFAULT_METRIC, type MetricName } from '../../similarity/index.js'
import { findSimilar, type SimilarFile } from '../../store/index.js'
import type { CliContext } from '../context.js'
import { argPath } from '../file-args.js'
import { formatBytes, formatPercent, parseMetric, parseThreshold } from '../options.js'
import { openSketchTree, treeOf } from '../sketch-tree.js'

interface SimilarOptions {
  top: number
  threshold: number
  metric: MetricName
  json?: boolean
  scan: boolean
}

function parseTop(text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`"${text}" is not a count; write a whole number ≥ 1`)
  return n
}

function formatRows(results: readonly SimilarFile[], metric: MetricName): string {
  if (results.length === 0) return '  (no similar file)\n'
  const head = `  ${metric.padEnd(11)}  jaccard  dice    lcs     contains  path\n`
  return (
    head +
    results
      .map((r) => {
        const main = metric === 'containment' ? r.containment : r[metric]
        const cells = [r.jaccard, r.dice, r.lcs, r.containment].map((v) => formatPercent(v).padEnd(7)).join('  ')
        return `  ${formatPercent(main).padEnd(11)}  ${cells}   ${r.path}  (${formatBytes(r.size)})`
      })
      .join('\n') +
    '\n'
  )
}

export function registerSimilar(program: Command, ctx: CliContext): void {
  program
    .command('similar')
    .description('list the files in a tree most similar to a file (sif one-against-all, from the tree\'s index)')
    .argument('<file>', 'the file to match')
    .argument('[dir]', 'the tree to search (default: the tree FILE is in: the nearest folder with .dsync/, else its folder)')
    .option('--top <n>', 'show at most N files', parseTop, 10)
    .option('--threshold <ratio>', 'only files at or above this similarity (0.25 or 25%)', parseThreshold, 0.25)
    .option('--metric <name>', 'rank by jaccard, dice, lcs or containment (how much of FILE the other holds)', parseMetric, DEFAULT_METRIC)
    .option('--no-scan', 'query the index as it is: do not bring it up to date first')
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nExamples:\n  dsync similar notes/plan.md\n  dsync similar --top 3 --metric containment draft.txt ~/docs --json\n')
    .action(async (fileArg: string, dirArg: string | undefined, o: SimilarOptions) => {
      const file = argPath(ctx, fileArg)
      await regularFileSize(file)
      const root = dirArg === undefined ? await treeOf(file) : argPath(ctx, dirArg)
      const query = await sketchPath(file, { signal: ctx.signal })
      const tree = await openSketchTree(ctx, root, { scan: o.scan })
      try {
        const self = relative(root, file).split(sep).join('/')
        const results = findSimilar(tree.index, query, { metric: o.metric, threshold: o.threshold, top: o.top, include: (p) => p !== self })
        if (o.json) {
          ctx.stdout.write(JSON.stringify({ file, root, metric: o.metric, threshold: o.threshold, index: tree.scan ?? null, results }) + '\n')
          return
        }
        const scanned = tree.scan === undefined ? 'index not updated' : `${tree.scan.files} files indexed, ${tree.scan.filesRead} read`
        ctx.stdout.write(`similar to ${fileArg} in ${root} (${scanned}; ${o.metric} ≥ ${formatPercent(o.threshold)}):\n` + formatRows(results, o.metric))
      } finally {
        await tree.close()
      }
    })
}
