import { relative, sep } from 'node:path'
import { regularFileSize, sketchPath } from '../../fs/index.js'
import type { MetricName } from '../../similarity/index.js'
import { findSimilar, type SimilarFile } from '../../store/index.js'
import type { SimilarCliOptions } from '../commands/similar.js'
import type { CliContext } from '../context.js'
import { argPath } from '../file-args.js'
import { formatBytes, formatPercent } from '../options.js'
import { openSketchTree, treeOf } from '../sketch-tree.js'

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

/** `dsync similar`'s action (registered in commands/similar.ts). */
export async function runSimilar(ctx: CliContext, fileArg: string, dirArg: string | undefined, o: SimilarCliOptions): Promise<void> {
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
}
