import type { Command } from 'commander'
import { computeSignature, encodeSignature, MAX_BLOCK } from '../../delta/index.js'
import { DsyncError } from '../../errors.js'
import { regularFileSize } from '../../fs/index.js'
import type { CliContext } from '../context.js'
import { argPath, readArg, STDIO_ARG, writeArg } from '../file-args.js'
import { parseSize } from '../options.js'

/** `dsync signature SEED SIGFILE`: what the seed holds, for `dsync delta` (like rdiff signature). */
export function registerSignature(program: Command, ctx: CliContext): void {
  program
    .command('signature')
    .description("write the signature of SEED (block checksums) to SIGFILE, for 'dsync delta'")
    .argument('<seed>', "the file the receiver has ('-' for stdin)")
    .argument('<sigfile>', "where to write the signature ('-' for stdout)")
    .option('--block-size <size>', 'bytes per block (default: about √ of the seed size, at least 256)', parseSize)
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  dsync signature old.iso old.sig',
        '  dsync delta old.sig new.iso new.delta',
        '  dsync patch old.iso new.delta rebuilt.iso',
        '  ssh host cat big.db | dsync signature - - > big.sig',
        '',
      ].join('\n'),
    )
    .action(async (seed: string, sigfile: string, o: { blockSize?: number }) => {
      if (o.blockSize !== undefined && o.blockSize > MAX_BLOCK) {
        throw new DsyncError('USAGE', `--block-size must be at most ${MAX_BLOCK} bytes, got ${o.blockSize}`)
      }
      const size = seed === STDIO_ARG ? undefined : await regularFileSize(argPath(ctx, seed))
      const sig = await computeSignature(readArg(ctx, seed), { size, blockSize: o.blockSize, signal: ctx.signal })
      const bytes = encodeSignature(sig)
      await writeArg(ctx, sigfile, (sink) => sink.write(bytes))
    })
}
