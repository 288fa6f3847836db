import type { Command } from 'commander'
import { DEFAULT_METRIC, type MetricName } from '../../choices.js'
import type { CliContext } from '../context.js'
import { parseMetric, parseThreshold } from '../options.js'
import { addConnectionOptions, type ConnectionCliOptions } from './sync-options.js'

export interface GroupsCliOptions extends ConnectionCliOptions {
  threshold: number
  metric: MetricName
  json?: boolean
  scan: boolean
}

export function registerGroups(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('groups')
    .description('list all groups of similar files in a tree (sif all-against-all, from the tree\'s index)')
    .argument('<dir>', 'the tree, or a served tree: ws://host:port/path, wss://…, ssh://host/path')
    .option('--threshold <ratio>', 'pairs at or above this similarity join a group (0.5 or 50%)', parseThreshold, 0.5)
    .option('--metric <name>', 'jaccard, dice, lcs or containment (of either file in the other)', parseMetric, DEFAULT_METRIC)
    .option('--no-scan', 'use the index as it is: do not bring it up to date first')
    .option('--json', 'print one JSON object: every group with its files and pairs')
  addConnectionOptions(cmd)
    .addHelpText(
      'after',
      '\nExamples:\n  dsync groups ~/docs\n  dsync groups --threshold 25% --metric containment src --json\n  dsync groups ws://work.example:8730/docs --token-file ~/.dsync-token\n',
    )
    .action(async (dirArg: string, o: GroupsCliOptions) => {
      const { runGroups } = await import('../actions/groups.js')
      await runGroups(ctx, dirArg, o)
    })
}
