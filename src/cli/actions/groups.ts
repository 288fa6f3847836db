import { groupSimilar } from '../../store/index.js'
import { askGroups, type GroupSink } from '../../sync/index.js'
import type { SimilarGroup } from '../../types.js'
import type { GroupsCliOptions } from '../commands/groups.js'
import type { CliContext } from '../context.js'
import { argPath } from '../file-args.js'
import { formatBytes, formatPercent } from '../options.js'
import { isServedTree } from '../served-tree.js'
import { openSketchTree } from '../sketch-tree.js'
import { connectionOptions } from './session-inputs.js'

/** sif's Figure 3: R marks the reference; each file's similarity to it, then its size. */
function formatGroup(g: SimilarGroup): string {
  return g.files.map((f, i) => `${i === 0 ? 'R' : ' '} ${formatPercent(f.similarity).padStart(6)}  ${f.path}  ${formatBytes(f.size)}`).join('\n')
}

/** `dsync groups`'s action (registered in commands/groups.ts). */
export async function runGroups(ctx: CliContext, dirArg: string, o: GroupsCliOptions): Promise<void> {
  if (isServedTree(dirArg)) return runServedGroups(ctx, dirArg, o)
  const tree = await openSketchTree(ctx, argPath(ctx, dirArg), { scan: o.scan })
  try {
    const groups = groupSimilar(tree.index, { metric: o.metric, threshold: o.threshold })
    const out = groupsOutput(ctx, { root: tree.root }, o)
    out.begin(tree.scan)
    for (const g of groups) out.group(g)
    out.end()
  } finally {
    await tree.close()
  }
}

/** `dsync groups URL`: the served tree's index answers; each group is printed as it comes. */
async function runServedGroups(ctx: CliContext, url: string, o: GroupsCliOptions): Promise<void> {
  const connection = await connectionOptions(url, o, ctx)
  const onNotice = (message: string): void => void ctx.stderr.write(`dsync: server: ${message}\n`)
  const out = groupsOutput(ctx, { url }, o)
  await askGroups(url, { ...connection, signal: ctx.signal, onNotice, metric: o.metric, threshold: o.threshold, scan: o.scan }, out)
  out.end()
}

/**
 * Prints groups one at a time, as text (sif's Figure 3) or as one JSON object, so a served
 * tree's groups need not all be held. `begin` takes what the index update did (JSON puts it
 * first), then each group, then `end`.
 */
function groupsOutput(ctx: CliContext, where: { root?: string; url?: string }, o: GroupsCliOptions): GroupSink & { end(): void } {
  let n = 0
  const rule = `${o.metric} ≥ ${formatPercent(o.threshold)}`
  return {
    begin(scan) {
      if (o.json) ctx.stdout.write(JSON.stringify({ ...where, metric: o.metric, threshold: o.threshold, index: scan ?? null }).slice(0, -1) + ',"groups":[')
    },
    group(g) {
      if (o.json) ctx.stdout.write((n > 0 ? ',' : '') + JSON.stringify(g))
      else ctx.stdout.write((n === 0 ? `The following groups of files are similar (${rule}):\n\n` : '\n\n') + formatGroup(g))
      n++
    },
    end() {
      if (o.json) ctx.stdout.write(']}\n')
      else ctx.stdout.write(n === 0 ? `No similar files (${rule}).\n` : '\n')
    },
  }
}
