import { resolve } from 'node:path'
import type { Command } from 'commander'
import cliProgress from 'cli-progress'
import { DsyncError } from '../../errors.js'
import { isSshTarget } from '../../net/index.js'
import { pull, push, type ClientOptions, type FileEvent, type SyncResult } from '../../sync/index.js'
import type { CliContext } from '../context.js'
import { formatEvent, formatOutcome, formatSummary } from '../output.js'
import { addSyncOptions, readOptionalFile, readToken, type SyncCliOptions } from './sync-options.js'

/** A progress bar over the bytes of files settled, on a terminal only (none when piped or
 *  with --json). Unchanged files settle at once; a transferred one when it is written. */
function progressBar(ctx: CliContext, o: SyncCliOptions): Pick<ClientOptions, 'onProgress'> & { stop(): void } {
  if (!o.progress || o.json || ctx.stderr.isTTY !== true) return { stop: () => undefined }
  const bar = new cliProgress.SingleBar(
    { stream: ctx.stderr as NodeJS.WritableStream, format: '[{bar}] {percentage}% | {value}/{total} bytes of files | {eta_formatted}' },
    cliProgress.Presets.shades_classic,
  )
  let started = false
  return {
    onProgress: (settled, total) => {
      if (!started) bar.start(total, settled)
      started = true
      bar.setTotal(total)
      bar.update(settled)
    },
    stop: () => bar.stop(),
  }
}

async function runSync(kind: 'push' | 'pull', local: string, url: string, o: SyncCliOptions, ctx: CliContext): Promise<void> {
  const ssh = isSshTarget(url)
  if (ssh && (o.tokenFile !== undefined || o.ca !== undefined)) {
    throw new DsyncError('USAGE', `${url}: ssh authenticates this transport; --token-file and --ca are for ws:// and wss:// servers`)
  }
  if (!ssh && (o.rsh !== undefined || o.remoteDsync !== undefined)) {
    throw new DsyncError('USAGE', `${url}: -e/--rsh and --remote-dsync are for ssh://host/path or host:path`)
  }
  const rsh = o.rsh ?? (ctx.env['DSYNC_RSH'] || undefined)
  const token = ssh ? null : await readToken(o.tokenFile, ctx)
  const ca = await readOptionalFile(o.ca, ctx, 'CA certificate')
  const bar = progressBar(ctx, o)
  const opts: ClientOptions = {
    token,
    ...(ca && { ca }),
    ...(rsh !== undefined && { rsh }),
    ...(o.remoteDsync !== undefined && { remoteDsync: o.remoteDsync }),
    signal: ctx.signal,
    dryRun: o.dryRun === true,
    delete: o.delete === true,
    checksum: o.checksum === true,
    force: o.force === true,
    threshold: o.threshold,
    metric: o.metric,
    exclude: o.exclude,
    onEvent: (e: FileEvent) => {
      if (o.verbose && !o.json && e.action !== 'unchanged') ctx.stdout.write(formatEvent(e) + '\n')
    },
    onNotice: (message: string) => {
      if (!o.json) ctx.stderr.write(`dsync: server: ${message}\n`)
    },
    ...bar,
  }
  let result: SyncResult
  try {
    const dir = resolve(ctx.cwd, local)
    result = kind === 'push' ? await push(dir, url, opts) : await pull(url, dir, opts)
  } finally {
    bar.stop()
  }
  const s = result.summary
  if (o.json) ctx.stdout.write(JSON.stringify({ ok: s.errors === 0, dryRun: o.dryRun === true, summary: s, events: result.events }) + '\n')
  else {
    if (o.verbose) for (const e of result.events) if (e.action === 'unchanged') ctx.stdout.write(formatEvent(e) + '\n')
    if (o.stats) ctx.stdout.write(formatSummary(s))
    ctx.stdout.write(formatOutcome(s, o.dryRun === true))
  }
  const kept = result.events.filter((e) => e.action === 'kept').length
  const conflicts = s.conflicts - kept
  if (s.errors > 0 || s.conflicts > 0) {
    const parts = [
      s.errors > 0 && `${s.errors} file(s) failed`,
      kept > 0 && `${kept} kept as changed on the receiver`,
      conflicts > 0 && `${conflicts} changed on both sides (the receiver's version kept as a conflict copy)`,
    ].filter((p): p is string => p !== false)
    throw new DsyncError('PARTIAL', `${parts.join(', ')}; the rest were synced${o.verbose || o.json ? '' : ' (run with -v for details)'}`)
  }
}

const URL_HELP = 'ws://host:port[/subdir], wss://… (TLS), or ssh://[user@]host[:port]/path and [user@]host:path (through ssh)'

export function registerPushPull(program: Command, ctx: CliContext): void {
  addSyncOptions(
    program
      .command('push')
      .description('send a local directory tree to a dsync server, with the fewest bytes on the wire')
      .argument('<local_dir>', 'directory to send')
      .argument('<url>', URL_HELP),
  )
    .addHelpText('after', '\nExamples:\n  dsync push ~/notes ws://work.example:8730/notes --token-file ~/.dsync-token -v --stats\n  DSYNC_TOKEN=… dsync push -n --delete . ws://127.0.0.1:8730\n  dsync push ~/notes me@work.example:notes -e "ssh -p 2222"\n')
    .action((local: string, url: string, o: SyncCliOptions) => runSync('push', local, url, o, ctx))
  addSyncOptions(
    program
      .command('pull')
      .description('bring a directory tree from a dsync server into a local directory (created if missing)')
      .argument('<url>', URL_HELP)
      .argument('<local_dir>', 'directory to write'),
  )
    .addHelpText('after', '\nExamples:\n  dsync pull ws://home.example:8730/notes ~/notes --token-file ~/.dsync-token --stats\n  dsync pull ssh://me@home.example/srv/notes ~/notes --remote-dsync ~/.local/bin/dsync\n')
    .action((url: string, local: string, o: SyncCliOptions) => runSync('pull', local, url, o, ctx))
}
