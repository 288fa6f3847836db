import { DsyncError } from '../errors.js'

/** Where an ssh session goes: what to pass ssh as the destination, and the remote tree. */
export interface SshTarget {
  /** `host` or `user@host`, as ssh takes it. */
  readonly destination: string
  /** From `ssh://host:PORT/…`; absent: ssh's own default (its config, or 22). */
  readonly port?: number
  /** The remote root as the remote shell resolves it: absolute, or relative to the login
   *  directory (home). */
  readonly path: string
}

/** The remote command run by default; `--remote-dsync` replaces it (rsync's --rsync-path). */
export const DEFAULT_REMOTE_DSYNC = 'dsync'
/** The remote-shell command run by default; `-e/--rsh` replaces it. */
export const DEFAULT_RSH = 'ssh'

/**
 * True for the ssh forms of a remote argument: `ssh://…`, or rsync's `[user@]host:path` (a
 * colon before any slash). push and pull take the remote argument in a fixed position and
 * never a local path there, so `host:path` cannot be taken for a local file; a local name with
 * a colon is written `./a:b` wherever a local path is meant.
 */
export function isSshTarget(arg: string): boolean {
  return /^ssh:\/\//i.test(arg) || (!arg.includes('://') && HOST_PATH.test(arg))
}

/** `[user@]host:path`, host possibly a bracketed IPv6 address. */
const HOST_PATH = /^((?:[^@/:[\]\s]+@)?(?:\[[0-9A-Fa-f:.]+\]|[^@/:[\]\s]+)):(.*)$/s

/**
 * Parses `ssh://[user@]host[:port]/path` or `[user@]host:path`. Paths follow git and rsync:
 * `ssh://host/srv/notes` is /srv/notes, `ssh://host/~/notes` and `host:notes` are notes in the
 * remote home, `host:` is the home itself. Throws DsyncError USAGE saying what is wrong.
 */
export function parseSshTarget(arg: string): SshTarget {
  if (/^ssh:\/\//i.test(arg)) return parseSshUrl(arg)
  const m = HOST_PATH.exec(arg)
  if (m === null || arg.includes('://')) throw new DsyncError('USAGE', `${arg}: expected ssh://[user@]host[:port]/path or [user@]host:path`)
  const path = m[2]!.replace(/^~\/?/, '')
  return { destination: checkDestination(arg, unbracket(m[1]!)), path: path === '' ? '.' : checkPath(arg, path) }
}

function parseSshUrl(arg: string): SshTarget {
  let u: URL
  try {
    u = new URL(arg)
  } catch (err) {
    throw new DsyncError('USAGE', `not a URL: ${JSON.stringify(arg)}; expected ssh://[user@]host[:port]/path`, { cause: err })
  }
  if (u.password !== '') throw new DsyncError('USAGE', `${arg}: no password in the URL; ssh asks for it, or use a key`)
  if (u.search !== '' || u.hash !== '') throw new DsyncError('USAGE', `${arg}: no ?query or #fragment allowed`)
  if (u.hostname === '') throw new DsyncError('USAGE', `${arg}: no host; expected ssh://[user@]host[:port]/path`)
  let path: string
  try {
    path = decodeURIComponent(u.pathname)
  } catch (err) {
    throw new DsyncError('USAGE', `${arg}: the path is not valid percent-encoding`, { cause: err })
  }
  if (path === '') throw new DsyncError('USAGE', `${arg}: name the remote directory: ssh://host/abs/path or ssh://host/~/path`)
  if (path === '/~' || path.startsWith('/~/')) path = path.slice(3) || '.'
  const user = u.username === '' ? '' : `${decodeURIComponent(u.username)}@`
  const port = u.port === '' ? undefined : Number(u.port)
  return { destination: checkDestination(arg, user + unbracket(u.hostname)), ...(port !== undefined && { port }), path: checkPath(arg, path) }
}

/** A destination starting with '-' would reach ssh as an option (`-oProxyCommand=…`, the
 *  git CVE-2017-1000117 pattern): refused. */
function checkDestination(arg: string, destination: string): string {
  if (destination.startsWith('-')) throw new DsyncError('USAGE', `${arg}: a host may not start with '-'`)
  return destination
}

function checkPath(arg: string, path: string): string {
  if (path.includes('\0') || path.includes('\n')) throw new DsyncError('USAGE', `${arg}: the remote path may not hold NUL or newline`)
  return path
}

/** ssh takes IPv6 addresses bare (`user@::1`); URLs and rsync's form bracket them. */
function unbracket(host: string): string {
  return host.replace(/\[([^\]]*)\]/, '$1')
}

/**
 * Splits an `-e/--rsh` string into argv the way rsync does (rsync(1), --rsh): words separated
 * by spaces, single or double quotes keep spaces inside a word, no backslash escapes, no shell.
 * Not `sh -c`: a remote-shell command is a program and its options, and a shell would expand
 * `$`, `*` and `~` in it behind the user's back. Throws USAGE for an empty string or an
 * unbalanced quote.
 */
export function splitCommand(text: string): string[] {
  const words: string[] = []
  let word: string | null = null
  let quote: '"' | "'" | null = null
  for (const ch of text) {
    if (quote !== null) {
      if (ch === quote) quote = null
      else word += ch
    } else if (ch === "'" || ch === '"') {
      quote = ch
      word ??= ''
    } else if (ch === ' ' || ch === '\t') {
      if (word !== null) words.push(word)
      word = null
    } else {
      word = (word ?? '') + ch
    }
  }
  if (quote !== null) throw new DsyncError('USAGE', `-e/--rsh ${JSON.stringify(text)}: unbalanced ${quote} quote`)
  if (word !== null) words.push(word)
  if (words.length === 0) throw new DsyncError('USAGE', '-e/--rsh: the remote-shell command is empty')
  return words
}

/** Quotes one word for a POSIX shell: the remote side runs ssh's command through one. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

/**
 * The local argv that opens the session: the remote shell, `-p PORT` when the URL has one, the
 * destination, and the remote command `REMOTE_DSYNC serve --stdio --root=PATH`. `remoteDsync`
 * goes to the remote shell as written (it may be `sudo dsync` or `node /opt/dsync/bin/dsync.js`,
 * as rsync's --rsync-path); the path is quoted.
 */
export function sshCommand(target: SshTarget, o: { rsh?: string; remoteDsync?: string } = {}): string[] {
  const rsh = splitCommand(o.rsh ?? DEFAULT_RSH)
  const remoteDsync = (o.remoteDsync ?? DEFAULT_REMOTE_DSYNC).trim()
  if (remoteDsync === '') throw new DsyncError('USAGE', '--remote-dsync: the remote command is empty')
  const remote = `${remoteDsync} serve --stdio ${shellQuote(`--root=${target.path}`)}`
  return [...rsh, ...(target.port === undefined ? [] : ['-p', String(target.port)]), target.destination, remote]
}
