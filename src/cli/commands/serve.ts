import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { resolve } from 'node:path'
import { DsyncError } from '../../errors.js'
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from '../../net/index.js'
import { serve, serveStdio, type ServeOptions } from '../../sync/index.js'
import type { CliContext } from '../context.js'
import { readOptionalFile, readToken } from './sync-options.js'

interface ServeCliOptions {
  root: string
  host: string
  port: number
  tokenFile?: string
  tlsCert?: string
  tlsKey?: string
  maxConnections: number
  maxConnectionsPerHost: number
  maxSessions: number
  stdio?: boolean
  verbose?: boolean
}

function parsePort(text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`"${text}" is not a port number (0-65535)`)
  return n
}

function parseCap(text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError(`"${text}" is not a count; write a whole number of at least 1`)
  return n
}

export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('serve a directory tree to dsync clients (push and pull) over WebSocket')
    .requiredOption('--root <dir>', 'the directory to serve')
    .option('--host <host>', 'address to listen on (without a token only loopback is allowed)', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', parsePort, 8730)
    .option('--token-file <file>', 'file holding the shared token (default: $DSYNC_TOKEN)')
    .option('--tls-cert <file>', 'PEM certificate: serve wss:// (with --tls-key)')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--max-connections <n>', 'connections waiting to authenticate, from anyone; more get HTTP 503', parseCap, DEFAULT_SERVER_LIMITS.maxPendingHandshakes)
    .option('--max-connections-per-host <n>', 'the same, from one address', parseCap, DEFAULT_SERVER_LIMITS.maxPendingPerAddress)
    .option('--max-sessions <n>', 'authenticated sessions at once (running or waiting for their tree); more are told BUSY', parseCap, DEFAULT_SERVER_LIMITS.maxSessions)
    .option('--stdio', 'serve one session on stdin/stdout and exit (what push and pull run through ssh)')
    .option('-v, --verbose', 'with --stdio: log the session to stderr (default: quiet, as the client reports)')
    .addHelpText('after', '\nExamples:\n  dsync serve --root ~/sync --token-file ~/.dsync-token --host 0.0.0.0\n  dsync serve --root /tmp/t --port 0   # loopback only, no token\n')
    .action(async (o: ServeCliOptions) => {
      if (o.stdio) return serveOverStdio(o, ctx)
      if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) {
        throw new DsyncError('USAGE', '--tls-cert and --tls-key go together: give both to serve wss://, or neither')
      }
      const token = await readToken(o.tokenFile, ctx)
      const cert = await readOptionalFile(o.tlsCert, ctx, 'TLS certificate')
      const key = await readOptionalFile(o.tlsKey, ctx, 'TLS key')
      const log = (line: string): void => void ctx.stderr.write(`${new Date().toISOString()} ${line}\n`)
      const limits: ServerLimits = {
        maxPendingHandshakes: o.maxConnections,
        maxPendingPerAddress: o.maxConnectionsPerHost,
        maxSessions: o.maxSessions,
      }
      const options: ServeOptions & { limits: ServerLimits } = {
        root: resolve(ctx.cwd, o.root),
        host: o.host,
        port: o.port,
        token,
        ...(cert && key && { tls: { cert, key } }),
        log,
        signal: ctx.signal,
        limits,
      }
      const server = await serve(options)
      log(`serving ${resolve(ctx.cwd, o.root)} at ${server.url}${token === null ? ' (no token: loopback only)' : ''}; Ctrl+C stops`)
      await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }))
      await server.close()
      log('stopped')
    })
}

/**
 * `serve --stdio`: one session over this process's stdin and stdout, run by a client through
 * ssh. stdout carries frames, so nothing else is written there. Quiet unless -v: its stderr is
 * the user's terminal (through ssh), and the client already reports the session's outcome and
 * errors. Exits 0 once a session ran, whatever its outcome, which the client has.
 */
async function serveOverStdio(o: ServeCliOptions, ctx: CliContext): Promise<void> {
  if (o.tokenFile !== undefined || o.tlsCert !== undefined || o.tlsKey !== undefined) {
    throw new DsyncError('USAGE', '--stdio serves through ssh, which authenticates and encrypts: no --token-file or TLS')
  }
  const log = (line: string): void => {
    if (o.verbose) ctx.stderr.write(`dsync serve --stdio: ${line}\n`)
  }
  // The process's own streams, not ctx.stdout (text, for humans): this is the one command whose
  // stdout is binary. CliContext.stdio is for `-` file arguments and has no flow control.
  await serveStdio({ root: resolve(ctx.cwd, o.root), input: process.stdin, output: process.stdout, log, signal: ctx.signal })
  // The session is over: stop reading, so a client that keeps its end open cannot keep us alive.
  process.stdin.destroy()
}
