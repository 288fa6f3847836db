import type { Command } from 'commander'
import type { CliContext } from '../context.js'

export interface DeltaCliOptions {
  stats?: boolean
}

/** `dsync delta SIGFILE TARGET DELTAFILE`: what turns the seed into TARGET (like rdiff delta). */
export function registerDelta(program: Command, ctx: CliContext): void {
  program
    .command('delta')
    .description("write the delta that turns the seed described by SIGFILE into TARGET, for 'dsync patch'")
    .argument('<sigfile>', "signature made by 'dsync signature' ('-' for stdin)")
    .argument('<target>', "the new file ('-' for stdin)")
    .argument('<deltafile>', "where to write the delta ('-' for stdout)")
    .option('--stats', 'print copied, literal and delta bytes on stderr')
    .addHelpText(
      'after',
      ['', 'Examples:', '  dsync delta old.sig new.iso new.delta', '  dsync delta --stats old.sig - - < new.iso > new.delta', ''].join('\n'),
    )
    .action(async (sigfile: string, target: string, deltafile: string, o: DeltaCliOptions) => {
      const { runDelta } = await import('../actions/delta.js')
      await runDelta(ctx, sigfile, target, deltafile, o)
    })
}
