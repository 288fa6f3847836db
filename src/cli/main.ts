import { Command, CommanderError } from 'commander'
import { DsyncError, isDsyncError } from '../errors.js'
import type { CliContext } from './context.js'
import { EXIT_CODE_TABLE, EXIT_CODES } from './exit-codes.js'
import { jsonError } from './output.js'
import { registerSimilarity } from './commands/similarity.js'
import { registerSimilar } from './commands/similar.js'
import { registerGroups } from './commands/groups.js'
import { registerSignature } from './commands/signature.js'
import { registerDelta } from './commands/delta.js'
import { registerPatch } from './commands/patch.js'
import { registerServe } from './commands/serve.js'
import { registerPushPull } from './commands/push-pull.js'
import { registerDemo } from './commands/demo.js'

const VERSION = '0.1.0'

/**
 * LAZY_LOAD: the heaviest libraries are imported where they are first used, not at startup:
 * ws (connect, startServer) and lmdb (Store.open). `dsync --version` took 0.68 s where `node -e 0`
 * took 0.15 s (load ~7); importing ws took 96–228 ms and lmdb 88 ms of it, which commands that
 * neither connect nor open a store (--help, similarity, signature, delta, patch) no longer pay.
 */

/** The whole command tree. Each command lives in its own module under commands/. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command()
  program
    .name('dsync')
    .description('keep two machines in sync with the fewest bytes on the wire')
    .version(VERSION)
    .option('--debug', 'print stack traces for errors')
    .exitOverride(usageError(null))
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
      // Usage errors come back as DsyncError USAGE (usageError) and are printed, like every
      // other error, by reportError: one style, `dsync: ...`, and a JSON object with --json.
      outputError: () => undefined,
    })
    .addHelpText('after', '\nExit codes:\n' + EXIT_CODE_TABLE.map(([n, s]) => `  ${String(n).padStart(3)}  ${s}`).join('\n') + '\n')
  registerDemo(program, ctx)
  registerServe(program, ctx)
  registerPushPull(program, ctx)
  registerSimilarity(program, ctx)
  registerSimilar(program, ctx)
  registerGroups(program, ctx)
  registerSignature(program, ctx)
  registerDelta(program, ctx)
  registerPatch(program, ctx)
  for (const cmd of program.commands) cmd.exitOverride(usageError(cmd.name()))
  return program
}

/**
 * Commander's exit, as an exception: --help and --version pass through (exit 0, or 2 for the
 * help printed when no command is given); a usage error becomes DsyncError USAGE saying where
 * the usage is (`see 'dsync push --help'`).
 */
function usageError(command: string | null): (err: CommanderError) => never {
  return (err) => {
    if (err.exitCode === 0 || err.code === 'commander.help' || err.code === 'commander.helpDisplayed' || err.code === 'commander.version') throw err
    const what = err.message.replace(/^error: /, '')
    throw new DsyncError('USAGE', `${what} (see 'dsync${command === null ? '' : ' ' + command} --help')`, { cause: err })
  }
}

/** --json before any `--`: failures are then printed as JSON on stdout as well. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json')
}

/** Runs dsync with `argv` (without node and script) and returns the exit code. Never throws. */
export async function main(argv: readonly string[], ctx: CliContext): Promise<number> {
  // Whether the command printed its result already: with --json, a failure after the result
  // (a partial sync, whose object carries the error) must not print a second object.
  let printed = false
  const out: CliContext = {
    ...ctx,
    stdout: {
      write: (s: string) => {
        printed = true
        return ctx.stdout.write(s)
      },
      ...(ctx.stdout.isTTY !== undefined && { isTTY: ctx.stdout.isTTY }),
    },
  }
  const program = buildProgram(out)
  const debug = argv.includes('--debug')
  try {
    await program.parseAsync([...argv], { from: 'user' })
    return EXIT_CODES.OK
  } catch (err) {
    return reportError(err, ctx, { debug, json: wantsJson(argv) && !printed })
  }
}

function reportError(err: unknown, ctx: CliContext, o: { debug: boolean; json: boolean }): number {
  if (err instanceof CommanderError) {
    // --help or --version (printed: exit 0), or the help shown when no command was given.
    return err.exitCode === 0 ? EXIT_CODES.OK : EXIT_CODES.USAGE
  }
  const e = isDsyncError(err)
    ? err
    : ctx.signal.aborted
      ? new DsyncError('ABORTED', 'interrupted', { cause: err })
      : new DsyncError('INTERNAL', `internal error: ${err instanceof Error ? err.message : String(err)} (run with --debug and report it)`, { cause: err })
  ctx.stderr.write(`dsync: ${e.message}\n`)
  if (o.json) ctx.stdout.write(JSON.stringify({ error: jsonError(e) }) + '\n')
  if (o.debug) ctx.stderr.write(`${(e.cause instanceof Error ? e.cause : e).stack ?? ''}\n`)
  return EXIT_CODES[e.code]
}
