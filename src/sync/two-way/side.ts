import { removeStaleTemps } from '../../fs/index.js'
import type { Message } from '../../net/index.js'
import { LocalFiles } from '../local-files.js'
import type { RoleDeps } from '../session.js'
import { SyncReport, type FileEvent } from '../report.js'

/** What either end of a two-way sync works with. */
export interface SideDeps extends RoleDeps {
  readonly now: () => Date
}

/** Ops, state entries and digest requests per message: far under the frame limit even with long paths. */
export const SYNC_BATCH = 500

/**
 * Walks this side's tree once for the whole session (the plan, both transfer phases, the
 * bases): metadata only, files read when something needs them. Temp files of dead sessions
 * are removed, as a receiver does: this session holds the tree.
 */
export async function walkSide(d: SideDeps): Promise<LocalFiles> {
  const temps: string[] = []
  const files = await LocalFiles.scan(d.root, d.store, {
    params: d.params,
    exclude: d.options.exclude,
    signal: d.signal,
    keepContent: true,
    onTemp: (p) => temps.push(p),
    onError: (err) => d.report.add({ path: err.path ?? '', action: 'error', code: err.code, message: err.message }),
  })
  if (!d.options.dryRun) await removeStaleTemps(d.root, temps)
  return files
}

/** A phase's report that also tells the session's: each event with the side it happened on. */
export class SideReport extends SyncReport {
  constructor(
    private readonly parent: SyncReport,
    private readonly side: 'local' | 'remote',
  ) {
    super()
  }

  override add(e: FileEvent): void {
    super.add(e)
    this.parent.add({ ...e, side: this.side })
  }

  override countFiles(files: number, bytes: number): void {
    super.countFiles(files, bytes)
    this.parent.countFiles(files, bytes)
  }

  override countUnchanged(files: number, bytes: number): void {
    super.countUnchanged(files, bytes)
    this.parent.countUnchanged(files, bytes)
  }

  /** Both phases share one walk of the tree: the session counts its reads once, at the end. */
  override countScan(): void {}
}

/** Paths whose outcome failed or was refused in these events: their bases stay as they were. */
export function unsurePaths(events: readonly FileEvent[]): string[] {
  return events.filter((e) => e.action === 'error' || e.action === 'kept').map((e) => e.path)
}

/** The event a peer's `result` about its own tree stands for. */
export function eventOfResult(m: Extract<Message, { t: 'result' }>): FileEvent {
  return {
    path: m.path,
    action: m.action as FileEvent['action'],
    ...(m.seed !== undefined && { seed: m.seed }),
    ...(m.code !== undefined && { code: m.code }),
    ...(m.message !== undefined && { message: m.message }),
  }
}
