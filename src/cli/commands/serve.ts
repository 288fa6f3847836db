import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { DEFAULT_SERVER_LIMITS as limits } from '../../choices.js'
import type { CliContext } from '../context.js'

export interface ServeCliOptions {
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
    .option('--max-connections <n>', 'connections waiting to authenticate, from anyone; more get HTTP 503', parseCap, limits.maxPendingHandshakes)
    .option('--max-connections-per-host <n>', 'the same, from one address', parseCap, limits.maxPendingPerAddress)
    .option('--max-sessions <n>', 'authenticated sessions at once (running or waiting for their tree); more are told BUSY', parseCap, limits.maxSessions)
    .option('--stdio', 'serve one session on stdin/stdout and exit (what push and pull run through ssh)')
    .option('-v, --verbose', 'with --stdio: log the session to stderr (default: quiet, as the client reports)')
    .addHelpText('after', '\nExamples:\n  dsync serve --root ~/sync --token-file ~/.dsync-token --host 0.0.0.0\n  dsync serve --root /tmp/t --port 0   # loopback only, no token\n')
    .action(async (o: ServeCliOptions) => {
      const { runServe } = await import('../actions/serve.js')
      await runServe(ctx, o)
    })
}
