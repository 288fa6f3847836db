import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { Option, type Command } from 'commander'
import { DsyncError } from '../../errors.js'
import { fsError } from '../../fs/index.js'
import { DEFAULT_METRIC, DEFAULT_THRESHOLD, type MetricName } from '../../similarity/index.js'
import type { CliContext } from '../context.js'
import { parseMetric, parseThreshold } from '../options.js'

/** Options shared by push and pull. */
export interface SyncCliOptions {
  dryRun?: boolean
  delete?: boolean
  exclude: string[]
  verbose?: boolean
  progress?: boolean
  stats?: boolean
  json?: boolean
  threshold: number
  metric: MetricName
  checksum?: boolean
  force?: boolean
  tokenFile?: string
  ca?: string
  rsh?: string
  remoteDsync?: string
}

/** Adds the rsync-like options of push and pull to a command. */
export function addSyncOptions(cmd: Command): Command {
  return cmd
    .option('-n, --dry-run', 'show what would be done; change nothing')
    .option('--delete', 'delete files on the receiver that the sender does not have')
    .option('--exclude <pattern>', 'skip paths matching a gitignore-style pattern (repeatable); .dsyncignore files are read too', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('-v, --verbose', 'one itemized line per file: what was done and why')
    .option('--progress', 'show a progress bar (on a terminal only)')
    .option('--stats', 'print totals: files, bytes matched / literal, bytes on the wire, speedup')
    .option('--json', 'print one JSON object with every file event and the totals')
    .option('--threshold <ratio>', 'send a delta when the seed is at least this similar (0.5 or 50%)', parseThreshold, DEFAULT_THRESHOLD)
    .option('--metric <name>', 'similarity metric for that rule: jaccard, dice, lcs, containment', parseMetric, DEFAULT_METRIC)
    .option('-c, --checksum', 'compare file contents, not size and modification time')
    .option('--force', 'overwrite (or delete) files changed on the receiver since the last sync')
    .option('--token-file <file>', 'file holding the shared token (default: $DSYNC_TOKEN)')
    .addOption(new Option('--ca <file>', 'PEM certificate to trust for wss:// (a self-signed server)'))
    .option('-e, --rsh <command>', "ssh: the remote-shell command, e.g. 'ssh -p 2222' (default: $DSYNC_RSH, else ssh)")
    .option('--remote-dsync <command>', 'ssh: the dsync command on the remote host (default: dsync)')
}

/** The token: --token-file wins over DSYNC_TOKEN; null when neither is set. */
export async function readToken(file: string | undefined, ctx: CliContext): Promise<string | null> {
  if (file === undefined) {
    const env = ctx.env['DSYNC_TOKEN']
    return env === undefined || env === '' ? null : env
  }
  let text
  try {
    text = await readFile(resolve(ctx.cwd, file), 'utf8')
  } catch (err) {
    throw fsError(err, file, 'read the token file')
  }
  const token = text.trim()
  if (token === '') throw new DsyncError('USAGE', `${file}: the token file is empty; put the shared token in it`)
  return token
}

export async function readOptionalFile(file: string | undefined, ctx: CliContext, what: string): Promise<Uint8Array | undefined> {
  if (file === undefined) return undefined
  try {
    return await readFile(resolve(ctx.cwd, file))
  } catch (err) {
    throw fsError(err, file, `read the ${what}`)
  }
}
