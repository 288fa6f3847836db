import type { Command } from 'commander'
import type { CliContext } from '../context.js'

/** `dsync patch SEED DELTAFILE OUT`: rebuilds the target from the seed (like rdiff patch). */
export function registerPatch(program: Command, ctx: CliContext): void {
  program
    .command('patch')
    .description('rebuild the target from SEED and DELTAFILE into OUT, verified by its SHA-256, written atomically')
    .argument('<seed>', 'the file the signature was made from (a real file: it is read at random offsets)')
    .argument('<deltafile>', "delta made by 'dsync delta' ('-' for stdin)")
    .argument('<out>', 'where to write the target (may be SEED itself: patching in place is safe)')
    .addHelpText(
      'after',
      [
        '',
        'OUT is written to a temp file next to it and renamed only once the rebuilt bytes match the',
        "target's SHA-256; on any error OUT is left as it was.",
        '',
        'Examples:',
        '  dsync patch old.iso new.delta new.iso',
        '  dsync patch notes.txt - notes.txt < notes.delta',
        '',
      ].join('\n'),
    )
    .action(async (seed: string, deltafile: string, out: string) => {
      const { runPatch } = await import('../actions/patch.js')
      await runPatch(ctx, seed, deltafile, out)
    })
}
