import type { Command } from 'commander'
import type { CliContext } from '../context.js'

export interface DemoCliOptions {
  keep?: boolean
}

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('a complete round trip on this machine: a local server, a sample tree, push, edit, push again, then a two-way sync with edits on both sides')
    .option('--keep', 'keep the temp directories for a look afterwards')
    .action(async (o: DemoCliOptions) => {
      const { runDemo } = await import('../actions/demo.js')
      await runDemo(ctx, o)
    })
}
