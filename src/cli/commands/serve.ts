import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { resolve } from 'node:path'
import { DsyncError } from '../../errors.js'
import { serve } from '../../sync/index.js'
import type { CliContext } from '../context.js'
import { readOptionalFile, readToken } from './sync-options.js'

interface ServeCliOptions {
  root: string
  host: string
  port: number
  tokenFile?: string
  tlsCert?: string
  tlsKey?: string
}

function parsePort(text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`"${text}" is not a port number (0-65535)`)
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
    .addHelpText('after', '\nExamples:\n  dsync serve --root ~/sync --token-file ~/.dsync-token --host 0.0.0.0\n  dsync serve --root /tmp/t --port 0   # loopback only, no token\n')
    .action(async (o: ServeCliOptions) => {
      if ((o.tlsCert === undefined) !== (o.tlsKey === undefined)) {
        throw new DsyncError('USAGE', '--tls-cert and --tls-key go together: give both to serve wss://, or neither')
      }
      const token = await readToken(o.tokenFile, ctx)
      const cert = await readOptionalFile(o.tlsCert, ctx, 'TLS certificate')
      const key = await readOptionalFile(o.tlsKey, ctx, 'TLS key')
      const log = (line: string): void => void ctx.stderr.write(`${new Date().toISOString()} ${line}\n`)
      const server = await serve({
        root: resolve(ctx.cwd, o.root),
        host: o.host,
        port: o.port,
        token,
        ...(cert && key && { tls: { cert, key } }),
        log,
        signal: ctx.signal,
      })
      log(`serving ${resolve(ctx.cwd, o.root)} at ${server.url}${token === null ? ' (no token: loopback only)' : ''}; Ctrl+C stops`)
      await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => r(), { once: true }))
      await server.close()
      log('stopped')
    })
}
