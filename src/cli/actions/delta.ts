import { decodeSignature, encodeDelta, MAX_SIGNATURE_BYTES, type DeltaStats } from '../../delta/index.js'
import { DsyncError } from '../../errors.js'
import { regularFileSize } from '../../fs/index.js'
import type { DeltaCliOptions } from '../commands/delta.js'
import type { CliContext } from '../context.js'
import { argPath, blameFile, readArg, readSmallArg, STDIO_ARG, writeArg } from '../file-args.js'
import { formatBytes, formatPercent } from '../options.js'

/** One line for --stats. */
export function formatDeltaStats(s: DeltaStats): string {
  const of = (n: number) => (s.targetSize === 0 ? '' : ` (${formatPercent(n / s.targetSize)})`)
  return `target ${formatBytes(s.targetSize)}: copied ${formatBytes(s.copiedBytes)}${of(s.copiedBytes)}, literal ${formatBytes(s.literalBytes)}${of(s.literalBytes)}, delta ${formatBytes(s.encodedBytes)}${of(s.encodedBytes)}\n`
}

/** `dsync delta`'s action (registered in commands/delta.ts). */
export async function runDelta(ctx: CliContext, sigfile: string, target: string, deltafile: string, o: DeltaCliOptions): Promise<void> {
  if (sigfile === STDIO_ARG && target === STDIO_ARG) throw new DsyncError('USAGE', "SIGFILE and TARGET cannot both be '-' (standard input)")
  const sig = await blameFile(sigfile, async () => decodeSignature(await readSmallArg(ctx, sigfile, MAX_SIGNATURE_BYTES, 'signature')))
  if (target !== STDIO_ARG) await regularFileSize(argPath(ctx, target))
  const d = encodeDelta(sig, readArg(ctx, target), { signal: ctx.signal })
  await writeArg(ctx, deltafile, async (sink) => {
    for await (const bytes of d.bytes) await sink.write(bytes)
  })
  if (o.stats) ctx.stderr.write(formatDeltaStats(d.stats()))
}
