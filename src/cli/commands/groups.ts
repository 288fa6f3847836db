import type { Command } from 'commander'
import { DEFAULT_METRIC, type MetricName } from '../../choices.js'
import type { CliContext } from '../context.js'
import { parseMetric, parseThreshold } from '../options.js'

export interface GroupsCliOptions {
  threshold: number
  metric: MetricName
  json?: boolean
  scan: boolean
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
    .action(async (dirArg: string, o: GroupsCliOptions) => {
      const { runGroups } = await import('../actions/groups.js')
      await runGroups(ctx, dirArg, o)
    })
}
