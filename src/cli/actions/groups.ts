import { groupSimilar, type SimilarGroup } from '../../store/index.js'
import type { GroupsCliOptions } from '../commands/groups.js'
import type { CliContext } from '../context.js'
import { argPath } from '../file-args.js'
import { formatBytes, formatPercent } from '../options.js'
import { openSketchTree } from '../sketch-tree.js'

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

/** `dsync groups`'s action (registered in commands/groups.ts). */
export async function runGroups(ctx: CliContext, dirArg: string, o: GroupsCliOptions): Promise<void> {
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
}
