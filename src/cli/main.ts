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
 * LAZY_LOAD: starting must not load the library. Each module under commands/ registers its
 * command's arguments, options and help with commander, importing only types, the parsers of
 * options.ts and the names and defaults of the leaf src/choices.ts; its action, under actions/,
 * is imported when the command runs, and with it sync/, net/, store/ (then ws and lmdb, where
 * first used); compress/ and zstd load just before (the preAction hook in buildProgram).
 * cli-progress is imported only to draw a bar.
 * Measured with bench/startup.ts: median of 5 on a shared 2-vCPU box (load ~2.7), wall and
 * CPU ms, (modules loaded); 25 modules are commander's 8, bin/dsync.js and 16 of dist/:
 *   command                 before                    now
 *   node -e 0               65–69, 50                 (the same)
 *   dsync --version         281–320, 270–280 (206)    103–107, 90 (25)
 *   dsync --help            299–305, 280 (206)        101–108, 80–90 (25)
 *   dsync push --help       290–301, 270–280 (206)    102–106, 90 (25)
 *   dsync serve --help      292–348, 270–290 (206)    (as --help: its caps' defaults are in src/choices.ts)
 *   no-op push, 10 files    409–472, 360–410 (245)    400–428, 360–390 (224)
 * The push still loaded 148 modules of dist/: sync/ and net/ import everything through their
 * index (the server side, two-way, ssh), and that loading was most of a no-op push; hence the
 * bundle and the code kept between runs (bin/bundle.js, code-cache.ts; bench/README.md "Startup").
 */

/**
 * The whole command tree. Each command registers its arguments, options and help in its module
 * under commands/, and imports its action, under actions/, when it runs.
 */
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
    // Every action reads or writes compressed frames (or may: the library's sessions, deltas,
    // signatures); zstd loads before it runs, and never for --version, --help or a usage error.
    .hook('preAction', async () => {
      const { loadCodecs } = await import('../compress/index.js')
      await loadCodecs()
    })
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
  // With --debug, bin/dsync.js runs the compiled modules, not the bundle (whose code is a few
  // long lines): a stack names the TypeScript files and lines, through tsc's source maps.
  if (debug) process.setSourceMapsEnabled(true)
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
