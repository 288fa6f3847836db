import type { Command } from 'commander'
import { DEFAULT_METRIC, type MetricName } from '../../similarity/index.js'
import { groupSimilar, type SimilarGroup } from '../../store/index.js'
import type { CliContext } from '../context.js'
import { argPath } from '../file-args.js'
import { formatBytes, formatPercent, parseMetric, parseThreshold } from '../options.js'
import { openSketchTree } from '../sketch-tree.js'

interface GroupsOptions {
  threshold: number
  metric: MetricName
  json?: boolean
  scan: boolean
}

/** sif's Figure 3: R marks the reference; each file's similarity to it, then its size. */
function formatGroups(groups: readonly SimilarGroup[]): string {
  return groups
    .map((g) =>
      g.files
        .map((f, i) => `${i === 0 ? 'R' : ' '} ${formatPercent(f.similarity).padStart(6)}  ${f.path}  ${formatBytes(f.size)}`)
        .join('\n'),
    )
    .join('\n\n')
}

export function registerGroups(program: Command, ctx: CliContext): void {
  program
    .command('groups')
    .description('list all groups of similar files in a tree (sif all-against-all, from the tree\'s index)')
    .argument('<dir>', 'the tree')
    .option('--threshold <ratio>', 'pairs at or above this similarity join a group (0.5 or 50%)', parseThreshold, 0.5)
    .option('--metric <name>', 'jaccard, dice, lcs or containment (of either file in the other)', parseMetric, DEFAULT_METRIC)
    .option('--no-scan', 'use the index as it is: do not bring it up to date first')
    .option('--json', 'print one JSON object: every group with its files and pairs')
    .addHelpText('after', '\nExamples:\n  dsync groups ~/docs\n  dsync groups --threshold 25% --metric containment src --json\n')
    .action(async (dirArg: string, o: GroupsOptions) => {
      const tree = await openSketchTree(ctx, argPath(ctx, dirArg), { scan: o.scan })
      try {
        const groups = groupSimilar(tree.index, { metric: o.metric, threshold: o.threshold })
        if (o.json) {
          ctx.stdout.write(JSON.stringify({ root: tree.root, metric: o.metric, threshold: o.threshold, index: tree.scan ?? null, groups }) + '\n')
          return
        }
        const head = `The following groups of files are similar (${o.metric} ≥ ${formatPercent(o.threshold)}):\n\n`
        ctx.stdout.write(groups.length === 0 ? `No similar files (${o.metric} ≥ ${formatPercent(o.threshold)}).\n` : head + formatGroups(groups) + '\n')
      } finally {
        await tree.close()
      }
    })
}
