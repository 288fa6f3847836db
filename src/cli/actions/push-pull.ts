import { resolve } from 'node:path'
import { DsyncError } from '../../errors.js'
import { pull, push, sync, type ClientOptions, type FileEvent, type SyncResult } from '../../sync/index.js'
import type { SyncKind } from '../commands/push-pull.js'
import { filterRules, type SyncCliOptions } from '../commands/sync-options.js'
import type { CliContext } from '../context.js'
import { sweepOnMainThread } from '../gc-tuning.js'
import { formatCandidates, formatDecision, formatEvent, formatOutcome, formatSummary, formatTwoWayOutcome, jsonError, plural } from '../output.js'
import { liveOutput } from '../progress.js'
import { connectionOptions, resolveFilters } from './session-inputs.js'

/** A URL where a directory was expected: `dsync push URL DIR` with the arguments swapped. */
const LOOKS_LIKE_URL = /^[a-z][a-z0-9+.-]*:\/\//i

function checkArgOrder(kind: SyncKind, local: string, url: string): void {
  if (LOOKS_LIKE_URL.test(local) && !LOOKS_LIKE_URL.test(url)) {
    const usage = kind === 'pull' ? 'dsync pull URL LOCAL_DIR' : `dsync ${kind} LOCAL_DIR URL`
    throw new DsyncError('USAGE', `${JSON.stringify(local)} is a URL where the local directory goes: arguments swapped? usage: ${usage}`)
  }
}

/** The action of push, pull and sync (registered in commands/push-pull.ts). */
export async function runSync(kind: SyncKind, local: string, url: string, o: SyncCliOptions, ctx: CliContext): Promise<void> {
  checkArgOrder(kind, local, url)
  // pull and two-way sync receive file data here (a push's receiver is the server).
  if (kind !== 'push') sweepOnMainThread()
  const connection = await connectionOptions(url, o, ctx)
  const exclude = await resolveFilters(filterRules(o), ctx)
  const human = !o.json && !o.quiet
  const live = await liveOutput(ctx, human && o.progress === true)
  // rsync's itemize: -v lists what changed, -vv every file, unchanged ones too.
  const itemize = (e: FileEvent): boolean => human && (o.verbose >= 2 || (o.verbose === 1 && e.action !== 'unchanged'))
  const opts: ClientOptions = {
    ...connection,
    signal: ctx.signal,
    dryRun: o.dryRun === true,
    delete: o.delete === true,
    checksum: o.checksum === true,
    force: o.force === true,
    threshold: o.threshold,
    metric: o.metric,
    exclude,
    ...(o.bwlimit && { bytesPerSecond: o.bwlimit }),
    ...(o.compressLevel !== undefined && { compressLevel: o.compressLevel }),
    ...(kind === 'sync' && { prefer: o.prefer ?? 'keep-both', propagateDeletes: o.deletions !== false, ...(o.machine !== undefined && { machine: o.machine }) }),
    // --json prints every event, and two-way's output counts them by side; the rest of the
    // output was printed as they came, and counts them but for the kept ones (below).
    keepEvents: o.json === true || kind === 'sync' ? 'all' : 'exceptions',
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
