import { measureSimilarity, type SimilarityResult } from '../../fs/index.js'
import type { SimilarityCliOptions } from '../commands/similarity.js'
import type { CliContext } from '../context.js'
import { formatBytes, formatPercent } from '../options.js'

function formatTable(r: SimilarityResult): string {
  const m = r.metrics
  const sizes = r.chunker.kind === 'cdc' ? `min ${formatBytes(r.chunker.min)}, avg ${formatBytes(r.chunker.avg)}, max ${formatBytes(r.chunker.max)}` : `block ${formatBytes(r.chunker.avg)}`
  const rows: [string, string][] = [
    ['A', `${r.a.path}  (${formatBytes(r.a.size)}, ${r.a.chunks} chunks)`],
    ['B', `${r.b.path}  (${formatBytes(r.b.size)}, ${r.b.chunks} chunks)`],
    ['method', r.method.description],
    ['error', `± ${formatPercent(r.method.errorBound)} (95%, sampling)`],
    ['shared', `${formatBytes(m.sharedBytes)}`],
    ['jaccard', formatPercent(m.jaccard)],
    ['dice', formatPercent(m.dice)],
    ['lcs', formatPercent(m.lcs)],
    ['containment', `${formatPercent(m.containmentAinB)} of A is in B, ${formatPercent(m.containmentBinA)} of B is in A`],
    ['chunker', `${r.chunker.kind} (${sizes})`],
    ['whole chunks', `${formatBytes(r.chunkMetrics.sharedBytes)} shared, dice ${formatPercent(r.chunkMetrics.dice)}`],
  ]
  const w = Math.max(...rows.map(([k]) => k.length))
  const verdict =
    r.verdict === 'delta'
      ? `delta would pay: ${r.rule.metric} ${formatPercent(r.similarity)} ≥ ${formatPercent(r.rule.threshold)}`
      : `send whole file: ${r.rule.metric} ${formatPercent(r.similarity)} < ${formatPercent(r.rule.threshold)}`
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + `\nverdict: ${verdict}\n`
}

/** `dsync similarity`'s action (registered in commands/similarity.ts). */
export async function runSimilarity(ctx: CliContext, a: string, b: string, o: SimilarityCliOptions): Promise<void> {
  const r = await measureSimilarity(a, b, o, ctx.signal)
  ctx.stdout.write(o.json ? JSON.stringify(r) + '\n' : formatTable(r))
}
