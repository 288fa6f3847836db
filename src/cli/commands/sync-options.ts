import { InvalidArgumentError, Option, type Command } from 'commander'
import { DEFAULT_METRIC, DEFAULT_THRESHOLD, type MetricName } from '../../choices.js'
import { parseMetric, parseThreshold } from '../options.js'

/** One --exclude, --include or --exclude-from, in the order given. */
export interface FilterRule {
  readonly kind: 'exclude' | 'include' | 'exclude-from'
  readonly value: string
}

/** Options shared by push and pull. */
export interface SyncCliOptions extends ConnectionCliOptions {
  dryRun?: boolean
  delete?: boolean
  /** The filter options share one list, in command-line order (see addSyncOptions); use
   *  filterRules(o). */
  exclude?: FilterRule[]
  include?: FilterRule[]
  excludeFrom?: FilterRule[]
  /** 0 (default): only the outcome line; 1 (-v): a line per change; 2 (-vv): a line per file */
  verbose: number
  quiet?: boolean
  progress?: boolean
  stats?: boolean
  json?: boolean
  threshold: number
  metric: MetricName
  checksum?: boolean
  force?: boolean
  /** --bwlimit, in bytes per second (0: none) */
  bwlimit?: number
  /** --compress-level, zstd 1–19 */
  compressLevel?: number
  /** (sync) --prefer local|remote|newer */
  prefer?: 'local' | 'remote' | 'newer'
  /** (sync) false with --no-delete */
  deletions?: boolean
  /** (sync) --machine NAME */
  machine?: string
}

/** The filter rules of a parsed command line, in the order given. */
export function filterRules(o: SyncCliOptions): readonly FilterRule[] {
  return o.exclude ?? o.include ?? o.excludeFrom ?? []
}

/** Adds the rsync-like options of push and pull to a command. */
export function addSyncOptions(cmd: Command): Command {
  return addSessionOptions(cmd.option('-n, --dry-run', 'show what would be done; change nothing').option('--delete', 'delete files on the receiver that the sender does not have'))
    .option('-c, --checksum', 'compare file contents, not size and modification time')
    .option('--force', 'overwrite (or delete) files changed on the receiver since the last sync')
}

/** Adds the options every client session has (push, pull, sync): filters, output, the rule,
 *  and how to reach the server. */
export function addSessionOptions(cmd: Command): Command {
  // --exclude, --include and --exclude-from are one ordered list of gitignore rules (the last
  // match wins, so `--exclude '*.log' --include keep.log` keeps keep.log). Commander keeps each
  // option's values apart, so the three parsers append to one list, made per command.
  const filters: FilterRule[] = []
  const filter = (kind: FilterRule['kind']) => (value: string): FilterRule[] => {
    filters.push({ kind, value })
    return filters
  }
  const session = cmd
    .option('--exclude <pattern>', 'skip paths matching a gitignore-style pattern (repeatable); .dsyncignore files are read too', filter('exclude'))
    .option('--include <pattern>', 'do not skip paths matching this pattern, though an earlier --exclude matched them (gitignore "!pattern")', filter('include'))
    .option('--exclude-from <file>', 'read exclude patterns from FILE, one a line (# comments; "+ PATTERN" includes)', filter('exclude-from'))
    .option('-v, --verbose', 'one itemized line per changed file, with why; -vv lists unchanged files too', (_: string, prev: number) => prev + 1, 0)
    .addOption(new Option('-q, --quiet', 'print nothing but errors').conflicts(['verbose', 'progress', 'stats']))
    .option('--progress', 'show a progress bar (on a terminal only)')
    .option('--stats', 'print totals: files, bytes matched / literal, bytes on the wire, speedup')
    .option('--json', 'print one JSON object with every file event and the totals')
    .option('--threshold <ratio>', 'send a delta when the seed is at least this similar (0.5 or 50%)', parseThreshold, DEFAULT_THRESHOLD)
    .option('--metric <name>', 'similarity metric for that rule: jaccard, dice, lcs, containment', parseMetric, DEFAULT_METRIC)
    .option('--bwlimit <rate>', 'limit file data to RATE KiB/s (suffixes K, M, G; 0: no limit), in either direction', parseRate)
    .option('--compress-level <n>', 'zstd level of the file data sent, 1-19 (default 3; 6 sends 1-7% less text for ~2.5x the CPU: slow links)', parseCompressLevel)
  return addConnectionOptions(session)
}

/** How to reach a server: what every command that takes a URL has (push, pull, sync, and
 *  similar and groups on a served tree). */
export interface ConnectionCliOptions {
  tokenFile?: string
  ca?: string
  /** --timeout, in seconds (0: none) */
  timeout?: number
  rsh?: string
  remoteDsync?: string
}

/** Adds the options of ConnectionCliOptions to a command. */
export function addConnectionOptions(cmd: Command): Command {
  return cmd
    .option('--token-file <file>', 'file holding the shared token (default: $DSYNC_TOKEN)')
    .addOption(new Option('--ca <file>', 'PEM certificate to trust for wss:// (a self-signed server)'))
    .option('--timeout <seconds>', 'end the session when no data moves either way for this long (0: never)', parseSeconds)
    .option('-e, --rsh <command>', "ssh: the remote-shell command, e.g. 'ssh -p 2222' (default: $DSYNC_RSH, else ssh)")
    .option('--remote-dsync <command>', 'ssh: the dsync command on the remote host (default: dsync)')
}

/** Parses --compress-level: a zstd level, 1 to 19. */
export function parseCompressLevel(text: string): number {
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1 || Number(text) > 19) throw new InvalidArgumentError(`"${text}" is not a compression level; write a whole number from 1 (fastest) to 19 (smallest)`)
  return Number(text)
}

/** Parses --timeout: whole seconds, 0 for none. */
export function parseSeconds(text: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new InvalidArgumentError(`"${text}" is not a number of seconds; write e.g. 60, or 0 for no timeout`)
  return Number(text)
}

const RATE_UNITS: Readonly<Record<string, number>> = Object.freeze({ '': 1024, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 })

/** Parses --bwlimit as rsync does: KiB per second by default, or with a suffix (`500`, `1.5M`,
 *  `100KiB`, `2048b`), 0 for no limit. Returns bytes per second. */
export function parseRate(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:([bkmg])(?:i?b)?)?\s*(?:\/s)?\s*$/i.exec(text)
  if (!m) throw new InvalidArgumentError(`"${text}" is not a rate; write KiB/s (500), or with a unit (1.5M, 100K), or 0 for no limit`)
  const v = Math.round(Number(m[1]) * RATE_UNITS[(m[2] ?? '').toLowerCase()]!)
  if (v !== 0 && v < 512) throw new InvalidArgumentError(`"${text}" is too low: at least 512 bytes per second (0 for no limit)`)
  return v
}
