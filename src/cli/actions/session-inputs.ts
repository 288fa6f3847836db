/** What push, pull, sync and serve read before a session starts: the token, a certificate or
 *  key, the filter rules (their options are registered in commands/sync-options.ts). */
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { DsyncError } from '../../errors.js'
import { fsError } from '../../fs/index.js'
import { isSshTarget, LIMITS } from '../../net/index.js'
import type { ConnectionCliOptions, FilterRule } from '../commands/sync-options.js'
import type { CliContext } from '../context.js'

/**
 * The filter rules as the gitignore patterns the session takes: an include becomes a negation
 * (`!PATTERN`), and an --exclude-from file is read line by line, as rsync reads it: blank lines
 * and lines starting with `#` or `;` are skipped, `- PATTERN` excludes and `+ PATTERN` includes.
 * As in gitignore, a path inside an excluded directory cannot be included again (the walk never
 * enters it): exclude `logs/*` rather than `logs/` to keep some of its files.
 */
export async function resolveFilters(rules: readonly FilterRule[], ctx: CliContext): Promise<string[]> {
  const out: string[] = []
  for (const r of rules) {
    if (r.kind === 'exclude') out.push(r.value)
    else if (r.kind === 'include') out.push('!' + r.value)
    else {
      let text
      try {
        text = await readFile(resolve(ctx.cwd, r.value), 'utf8')
      } catch (err) {
        throw fsError(err, r.value, 'read the exclude file')
      }
      for (const raw of text.split('\n')) {
        const line = raw.replace(/\r$/, '')
        if (line.trim() === '' || line.startsWith('#') || line.startsWith(';')) continue
        if (line.startsWith('+ ')) out.push('!' + line.slice(2))
        else if (line.startsWith('- ')) out.push(line.slice(2))
        else out.push(line)
      }
    }
  }
  if (out.length > LIMITS.maxExcludes) {
    throw new DsyncError('USAGE', `${out.length} exclude and include patterns; at most ${LIMITS.maxExcludes} are allowed (use a .dsyncignore file in the tree for more)`)
  }
  const long = out.find((p) => Buffer.byteLength(p) > LIMITS.maxPatternBytes)
  if (long !== undefined) throw new DsyncError('USAGE', `pattern too long (${Buffer.byteLength(long)} bytes; at most ${LIMITS.maxPatternBytes}): ${long.slice(0, 60)}…`)
  return out
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

/** How to reach `url`, from the connection options (`addConnectionOptions`): the token, a CA
 *  certificate, the ssh command, the idle timeout. A transport's options given for the other
 *  transport are a USAGE error. */
export interface Connection {
  readonly token: string | null
  readonly ca?: Uint8Array
  readonly rsh?: string
  readonly remoteDsync?: string
  readonly idleTimeoutMs?: number
}

export async function connectionOptions(url: string, o: ConnectionCliOptions, ctx: CliContext): Promise<Connection> {
  const ssh = isSshTarget(url)
  if (ssh && (o.tokenFile !== undefined || o.ca !== undefined)) {
    throw new DsyncError('USAGE', `${url}: ssh authenticates this transport; --token-file and --ca are for ws:// and wss:// servers`)
  }
  if (!ssh && (o.rsh !== undefined || o.remoteDsync !== undefined)) {
    throw new DsyncError('USAGE', `${url}: -e/--rsh and --remote-dsync are for ssh://host/path or host:path`)
  }
  const rsh = o.rsh ?? (ctx.env['DSYNC_RSH'] || undefined)
  const ca = await readOptionalFile(o.ca, ctx, 'CA certificate')
  return {
    token: ssh ? null : await readToken(o.tokenFile, ctx),
    ...(ca && { ca }),
    ...(rsh !== undefined && { rsh }),
    ...(o.remoteDsync !== undefined && { remoteDsync: o.remoteDsync }),
    ...(o.timeout && { idleTimeoutMs: o.timeout * 1000 }),
  }
}
