import { Command, CommanderError } from 'commander'
import { DsyncError, isDsyncError } from '../errors.js'
import type { CliContext } from './context.js'
import { EXIT_CODE_TABLE, EXIT_CODES } from './exit-codes.js'
import { registerSimilarity } from './commands/similarity.js'
import { registerSignature } from './commands/signature.js'
import { registerDelta } from './commands/delta.js'
import { registerPatch } from './commands/patch.js'
import { registerServe } from './commands/serve.js'
import { registerPushPull } from './commands/push-pull.js'
import { registerDemo } from './commands/demo.js'

const VERSION = '0.1.0'

/** The whole command tree. Each command lives in its own module under commands/. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command()
  program
    .name('dsync')
    .description('keep two machines in sync with the fewest bytes on the wire')
    .version(VERSION)
    .option('--debug', 'print stack traces for errors')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    })
    .addHelpText('after', '\nExit codes:\n' + EXIT_CODE_TABLE.map(([n, s]) => `  ${String(n).padStart(3)}  ${s}`).join('\n') + '\n')
  registerDemo(program, ctx)
  registerServe(program, ctx)
  registerPushPull(program, ctx)
  registerSimilarity(program, ctx)
  registerSignature(program, ctx)
  registerDelta(program, ctx)
  registerPatch(program, ctx)
  for (const cmd of program.commands) cmd.exitOverride().showHelpAfterError('(run with --help for usage)')
  return program
}

/** Runs dsync with `argv` (without node and script) and returns the exit code. Never throws. */
export async function main(argv: readonly string[], ctx: CliContext): Promise<number> {
  const program = buildProgram(ctx)
  const debug = argv.includes('--debug')
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return EXIT_CODES.OK
  } catch (err) {
    return reportError(err, ctx, debug)
  }
}

function reportError(err: unknown, ctx: CliContext, debug: boolean): number {
  if (err instanceof CommanderError) {
    // Commander already printed its message (and help, for usage errors).
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0
    return EXIT_CODES.USAGE
  }
  const e = isDsyncError(err)
    ? err
    : ctx.signal.aborted
      ? new DsyncError('ABORTED', 'interrupted', { cause: err })
      : new DsyncError('INTERNAL', `internal error: ${err instanceof Error ? err.message : String(err)} (run with --debug and report it)`, { cause: err })
  ctx.stderr.write(`dsync: ${e.message}\n`)
  if (debug) ctx.stderr.write(`${(e.cause instanceof Error ? e.cause : e).stack ?? ''}\n`)
  return EXIT_CODES[e.code]
}
