import { resolve } from 'node:path'
import type { Command } from 'commander'
import { DsyncError } from '../../errors.js'
import { isSshTarget } from '../../net/index.js'
import { pull, push, type ClientOptions, type FileEvent, type SyncResult } from '../../sync/index.js'
import type { CliContext } from '../context.js'
import { formatEvent, formatOutcome, formatSummary, jsonError } from '../output.js'
import { liveOutput } from '../progress.js'
import { addSyncOptions, filterRules, readOptionalFile, readToken, resolveFilters, type SyncCliOptions } from './sync-options.js'

/** A URL where a directory was expected: `dsync push URL DIR` with the arguments swapped. */
const LOOKS_LIKE_URL = /^[a-z][a-z0-9+.-]*:\/\//i

function checkArgOrder(kind: 'push' | 'pull', local: string, url: string): void {
  if (LOOKS_LIKE_URL.test(local) && !LOOKS_LIKE_URL.test(url)) {
    const usage = kind === 'push' ? 'dsync push LOCAL_DIR URL' : 'dsync pull URL LOCAL_DIR'
    throw new DsyncError('USAGE', `${JSON.stringify(local)} is a URL where the local directory goes: arguments swapped? usage: ${usage}`)
  }
}

async function runSync(kind: 'push' | 'pull', local: string, url: string, o: SyncCliOptions, ctx: CliContext): Promise<void> {
  checkArgOrder(kind, local, url)
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
  const exclude = await resolveFilters(filterRules(o), ctx)
  const human = !o.json && !o.quiet
  const live = liveOutput(ctx, human && o.progress === true)
  // rsync's itemize: -v lists what changed, -vv every file, unchanged ones too.
  const itemize = (e: FileEvent): boolean => human && (o.verbose >= 2 || (o.verbose === 1 && e.action !== 'unchanged'))
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
    exclude,
    ...(o.timeout && { idleTimeoutMs: o.timeout * 1000 }),
    ...(o.bwlimit && { bytesPerSecond: o.bwlimit }),
    onEvent: (e: FileEvent) => {
      if (itemize(e)) live.line(formatEvent(e))
    },
    onNotice: (message: string) => {
      if (human) live.notice(`dsync: server: ${message}`)
    },
    ...(live.onProgress && { onProgress: live.onProgress }),
  }
  let result: SyncResult
  try {
    const dir = resolve(ctx.cwd, local)
    result = kind === 'push' ? await push(dir, url, opts) : await pull(url, dir, opts)
  } finally {
    live.stop()
  }
  const s = result.summary
  const kept = result.events.filter((e) => e.action === 'kept').length
  const conflicts = s.conflicts - kept
  const problems = [
    s.errors > 0 && `${s.errors} file(s) failed`,
    kept > 0 && `${kept} kept as changed on the receiver`,
    conflicts > 0 && `${conflicts} changed on both sides (the receiver's version kept as a conflict copy)`,
  ].filter((p): p is string => p !== false)
  const partial =
    problems.length > 0
      ? new DsyncError('PARTIAL', `${problems.join(', ')}; the rest were synced${o.verbose > 0 || o.json ? '' : ' (run with -v for details)'}`)
      : undefined
  if (o.json) {
    const error = partial && { error: jsonError(partial) }
    ctx.stdout.write(JSON.stringify({ ok: partial === undefined, dryRun: o.dryRun === true, summary: s, events: result.events, ...error }) + '\n')
  } else if (!o.quiet) {
    if (o.stats) ctx.stdout.write(formatSummary(s))
    ctx.stdout.write(formatOutcome(s, o.dryRun === true))
  }
  if (partial) throw partial
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
