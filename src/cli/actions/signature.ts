import { computeSignature, encodeSignature, MAX_BLOCK } from '../../delta/index.js'
import { DsyncError } from '../../errors.js'
import { regularFileSize } from '../../fs/index.js'
import type { SignatureCliOptions } from '../commands/signature.js'
import type { CliContext } from '../context.js'
import { argPath, readArg, STDIO_ARG, writeArg } from '../file-args.js'

/** `dsync signature`'s action (registered in commands/signature.ts). */
export async function runSignature(ctx: CliContext, seed: string, sigfile: string, o: SignatureCliOptions): Promise<void> {
  if (o.blockSize !== undefined && o.blockSize > MAX_BLOCK) {
    throw new DsyncError('USAGE', `--block-size must be at most ${MAX_BLOCK} bytes, got ${o.blockSize}`)
  }
  const size = seed === STDIO_ARG ? undefined : await regularFileSize(argPath(ctx, seed))
  const sig = await computeSignature(readArg(ctx, seed), { size, blockSize: o.blockSize, signal: ctx.signal })
  const bytes = encodeSignature(sig)
  await writeArg(ctx, sigfile, (sink) => sink.write(bytes))
}
