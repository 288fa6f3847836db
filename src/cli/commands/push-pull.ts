import { resolve } from 'node:path'
import { Option, type Command } from 'commander'
import { DsyncError } from '../../errors.js'
import { isSshTarget } from '../../net/index.js'
import { pull, push, sync, type ClientOptions, type FileEvent, type SyncResult } from '../../sync/index.js'
import type { CliContext } from '../context.js'
import { formatCandidates, formatDecision, formatEvent, formatOutcome, formatSummary, formatTwoWayOutcome, jsonError, plural } from '../output.js'
import { liveOutput } from '../progress.js'
import { addSessionOptions, addSyncOptions, filterRules, readOptionalFile, readToken, resolveFilters, type SyncCliOptions } from './sync-options.js'

/** A URL where a directory was expected: `dsync push URL DIR` with the arguments swapped. */
const LOOKS_LIKE_URL = /^[a-z][a-z0-9+.-]*:\/\//i

type Kind = 'push' | 'pull' | 'sync'

function checkArgOrder(kind: Kind, local: string, url: string): void {
  if (LOOKS_LIKE_URL.test(local) && !LOOKS_LIKE_URL.test(url)) {
    const usage = kind === 'pull' ? 'dsync pull URL LOCAL_DIR' : `dsync ${kind} LOCAL_DIR URL`
    throw new DsyncError('USAGE', `${JSON.stringify(local)} is a URL where the local directory goes: arguments swapped? usage: ${usage}`)
  }
}

async function runSync(kind: Kind, local: string, url: string, o: SyncCliOptions, ctx: CliContext): Promise<void> {
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
    ...(o.compressLevel !== undefined && { compressLevel: o.compressLevel }),
    ...(kind === 'sync' && { prefer: o.prefer ?? 'keep-both', propagateDeletes: o.deletions !== false, ...(o.machine !== undefined && { machine: o.machine }) }),
    onEvent: (e: FileEvent) => {
      if (!itemize(e)) return
      live.line(formatEvent(e))
      // -vv: the seeds weighed for it, best first, each with its similarity.
      if (o.verbose >= 2 && e.candidates !== undefined) live.line(formatCandidates(e.candidates))
    },
    onNotice: (message: string) => {
      if (human) live.notice(`dsync: server: ${message}`)
    },
    ...(live.onProgress && { onProgress: live.onProgress }),
  }
  let result: SyncResult
  try {
    const dir = resolve(ctx.cwd, local)
    result = kind === 'push' ? await push(dir, url, opts) : kind === 'pull' ? await pull(url, dir, opts) : await sync(dir, url, opts)
  } finally {
    live.stop()
  }
  const s = result.summary
  const kept = result.events.filter((e) => e.action === 'kept').length
  const conflicts = s.conflicts - kept
  if (kind === 'sync' && o.dryRun && human) for (const d of result.plan?.decisions ?? []) ctx.stdout.write(formatDecision(d) + '\n')
  const planned = result.plan?.decisions.filter((d) => d.outcome === 'conflict' || d.outcome === 'kept').length ?? 0
  const problems = [
    s.errors > 0 && `${s.errors} file(s) failed`,
    kept > 0 && `${kept} kept as changed ${kind === 'sync' ? 'during the sync' : 'on the receiver'}`,
    kind !== 'sync' && conflicts > 0 && `${conflicts} changed on both sides (the receiver's version kept as a conflict copy)`,
    kind === 'sync' && planned > 0 && `${plural(planned, 'conflict')}${o.dryRun ? ' would be' : ''} settled by keeping both versions or the changed one (see -v)`,
  ].filter((p): p is string => p !== false)
  const partial =
    problems.length > 0
      ? new DsyncError('PARTIAL', `${problems.join(', ')}; the rest were synced${o.verbose > 0 || o.json ? '' : ' (run with -v for details)'}`)
      : undefined
  if (o.json) {
    const error = partial && { error: jsonError(partial) }
    const plan = result.plan && { plan: result.plan.decisions }
    ctx.stdout.write(JSON.stringify({ ok: partial === undefined, dryRun: o.dryRun === true, summary: s, events: result.events, ...plan, ...error }) + '\n')
  } else if (!o.quiet) {
    if (o.stats) ctx.stdout.write(formatSummary(s))
    ctx.stdout.write(result.plan ? formatTwoWayOutcome(result, o.dryRun === true) : formatOutcome(s, o.dryRun === true))
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
  addSessionOptions(
    program
      .command('sync')
      .description('two-way: bring a local directory and a served one to the same tree, each side\'s changes since their last sync going the other way')
      .argument('<local_dir>', 'directory to sync (created if missing)')
      .argument('<url>', URL_HELP)
      .option('-n, --dry-run', 'print the plan both ways (→ sent, ← received, ⇄ conflict, ✗ deleted); change nothing, not even state'),
  )
    .addOption(new Option('--prefer <side>', 'settle a file changed on both sides by taking this side\'s version (local, remote or newer) instead of keeping both').choices(['local', 'remote', 'newer']))
    .option('--no-delete', 'do not make deletions on the other side: a file deleted on one side comes back from the other', undefined)
    .option('--machine <name>', 'this machine\'s name in conflict copies (default: the host name)')
    .addHelpText('after', TWO_WAY_HELP)
    .action((local: string, url: string, o: SyncCliOptions & { delete?: boolean }) => runSync('sync', local, url, { ...o, deletions: o.delete !== false }, ctx))
}

const TWO_WAY_HELP = `
How each path is settled (against the state of the last sync between these two trees):
  changed on one side only        its version goes to the other side (new, edit, mode, deletion)
  changed on both, the same way   nothing to do
  changed on both, differently    conflict: both kept; the newer keeps the name, the other is
                                  NAME.dsync-conflict-MACHINE-YYYYMMDD-HHMMSS.EXT on both sides
                                  (--prefer local|remote|newer: that version overwrites instead)
  deleted on one, changed on other the changed file is kept and comes back (a conflict)
  renamed on one, edited on other renamed on both, with the edit
Exit code 10 when a conflict was settled or a file failed.

Examples:
  dsync sync ~/notes ws://work.example:8730/notes --token-file ~/.dsync-token -v
  dsync sync -n ~/notes ws://work.example:8730/notes      # the plan, nothing changed
`
