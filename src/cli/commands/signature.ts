import type { Command } from 'commander'
import type { CliContext } from '../context.js'
import { parseSize } from '../options.js'

export interface SignatureCliOptions {
  blockSize?: number
}

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
    .action(async (seed: string, sigfile: string, o: SignatureCliOptions) => {
      const { runSignature } = await import('../actions/signature.js')
      await runSignature(ctx, seed, sigfile, o)
    })
}
