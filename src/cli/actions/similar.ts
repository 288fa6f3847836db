import { relative, sep } from 'node:path'
import { regularFileSize, sketchPath } from '../../fs/index.js'
import type { MetricName } from '../../similarity/index.js'
import { findSimilar } from '../../store/index.js'
import { askSimilar } from '../../sync/index.js'
import type { SimilarFile, SketchScanResult } from '../../types.js'
import type { SimilarCliOptions } from '../commands/similar.js'
import type { CliContext } from '../context.js'
import { argPath } from '../file-args.js'
import { formatBytes, formatPercent } from '../options.js'
import { isServedTree } from '../served-tree.js'
import { openSketchTree, treeOf } from '../sketch-tree.js'
import { connectionOptions } from './session-inputs.js'

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
  if (dirArg !== undefined && isServedTree(dirArg)) return runServedSimilar(ctx, fileArg, file, dirArg, o)
  const root = dirArg === undefined ? await treeOf(file) : argPath(ctx, dirArg)
  const query = await sketchPath(file, { signal: ctx.signal })
  const tree = await openSketchTree(ctx, root, { scan: o.scan })
  try {
    const self = relative(root, file).split(sep).join('/')
    const results = findSimilar(tree.index, query, { metric: o.metric, threshold: o.threshold, top: o.top, include: (p) => p !== self })
    printSimilar(ctx, fileArg, { file, root }, results, tree.scan, o)
  } finally {
    await tree.close()
  }
}

/** `dsync similar FILE URL`: the file is sketched here, the served tree's index answers. */
async function runServedSimilar(ctx: CliContext, fileArg: string, file: string, url: string, o: SimilarCliOptions): Promise<void> {
  const query = await sketchPath(file, { signal: ctx.signal })
  const connection = await connectionOptions(url, o, ctx)
  const onNotice = (message: string): void => void ctx.stderr.write(`dsync: server: ${message}\n`)
  const answer = await askSimilar(url, query, { ...connection, signal: ctx.signal, onNotice, metric: o.metric, threshold: o.threshold, top: o.top, scan: o.scan })
  printSimilar(ctx, fileArg, { file, url }, answer.files, answer.scan, o)
}

function printSimilar(
  ctx: CliContext,
  fileArg: string,
  where: { file: string; root?: string; url?: string },
  results: readonly SimilarFile[],
  scan: SketchScanResult | undefined,
  o: SimilarCliOptions,
): void {
  if (o.json) {
    ctx.stdout.write(JSON.stringify({ ...where, metric: o.metric, threshold: o.threshold, index: scan ?? null, results }) + '\n')
    return
  }
  const scanned = scan === undefined ? 'index not updated' : `${scan.files} files indexed, ${scan.filesRead} read`
  ctx.stdout.write(`similar to ${fileArg} in ${where.root ?? where.url} (${scanned}; ${o.metric} ≥ ${formatPercent(o.threshold)}):\n` + formatRows(results, o.metric))
}
