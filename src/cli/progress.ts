import type { SingleBar } from 'cli-progress'
import type { CliContext } from './context.js'
import { formatBytes } from './options.js'

/** Width of the bar itself, in characters. */
const BAR_WIDTH = 30
/**
 * The bar appears only once the run has lasted this long. Totals grow while the file list
 * arrives (a pull hears of its files in batches), so a bar drawn at once showed `0/6` for a
 * moment; and a run that ends sooner needs no bar at all.
 */
const SHOW_AFTER_MS = 250
/** An estimate from less than this much of the run is noise: show `--` until then. */
const ETA_AFTER_MS = 1000

/** A time left, for people: `7s`, `1m05s`, `2h03m`; `--` when unknown (cli-progress gives
 *  'NULL' or 'INF' when the rate is zero or not yet measured). */
export function formatEta(seconds: number | string): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return '--'
  const s = Math.round(seconds)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}

/** What the bar draws: `[bar] 42% | 1.2 MiB of 3.0 MiB | ETA 12s`. */
export function formatProgress(p: { bar: string; value: number; total: number; eta: number | string; elapsedMs: number }): string {
  const pct = p.total === 0 ? 100 : Math.floor((100 * Math.min(p.value, p.total)) / p.total)
  const eta = p.elapsedMs < ETA_AFTER_MS ? '--' : formatEta(p.eta)
  return `[${p.bar}] ${String(pct).padStart(3)}% | ${formatBytes(p.value)} of ${formatBytes(p.total)} | ETA ${eta}`
}

/** Where a sync's human output goes while it runs: itemized lines, and the bar if any. */
export interface LiveOutput {
  /** bytes of files settled so far, bytes of all files listed so far */
  readonly onProgress?: (settledBytes: number, totalBytes: number) => void
  /** Prints one line (without its newline): above the bar while the bar is shown. */
  line(text: string): void
  /** Prints a message on stderr (without its newline): above the bar while it is shown. */
  notice(text: string): void
  /** Removes the bar (lines still buffered are printed first). */
  stop(): void
}

/**
 * The live output of push and pull. With `progress` and stderr a terminal, a bar on stderr
 * (none when piped: it would only garble a log). The itemized lines go to stdout; when stdout is
 * the same terminal as the bar, they go through cli-progress's MultiBar.log, which prints them
 * above the bar and redraws it, instead of writing across it. cli-progress is loaded only when
 * a bar is drawn (21 modules, ~8 ms of every push and pull's start otherwise).
 */
export async function liveOutput(ctx: CliContext, progress: boolean): Promise<LiveOutput> {
  const plain: LiveOutput = {
    line: (text) => void ctx.stdout.write(text + '\n'),
    notice: (text) => void ctx.stderr.write(text + '\n'),
    stop: () => undefined,
  }
  if (!progress || ctx.stderr.isTTY !== true) return plain
  const { default: cliProgress } = await import('cli-progress')
  const multi = new cliProgress.MultiBar({
    stream: ctx.stderr as NodeJS.WritableStream,
    barsize: BAR_WIDTH,
    hideCursor: true,
    clearOnComplete: true,
    format: (options, params) =>
      formatProgress({
        bar: cliProgress.Format.BarFormat(params.progress, options),
        value: params.value,
        total: params.total,
        eta: params.eta,
        elapsedMs: Date.now() - params.startTime,
      }),
  }, cliProgress.Presets.shades_classic)
  let bar: SingleBar | undefined
  let latest = { settled: 0, total: 0 }
  let stopped = false
  const show = (): void => {
    if (bar === undefined && !stopped) bar = multi.create(latest.total, latest.settled)
  }
  const timer = setTimeout(show, SHOW_AFTER_MS)
  timer.unref()
  const throughBar = ctx.stdout.isTTY === true
  return {
    onProgress: (settled, total) => {
      latest = { settled, total }
      if (bar === undefined) return
      bar.setTotal(total)
      bar.update(settled)
    },
    line: (text) => {
      if (bar !== undefined && throughBar) multi.log(text + '\n')
      else ctx.stdout.write(text + '\n')
    },
    notice: (text) => {
      if (bar !== undefined) multi.log(text + '\n')
      else ctx.stderr.write(text + '\n')
    },
    stop: () => {
      stopped = true
      clearTimeout(timer)
      if (bar === undefined) return
      multi.update() // prints what log() buffered: stop() alone would drop it
      multi.stop()
    },
  }
}
