import { resolve } from 'node:path'
import { DsyncError } from '../../errors.js'
import type { ServerLimits } from '../../net/index.js'
import { serve, serveStdio, type ServeOptions } from '../../sync/index.js'
import type { ServeCliOptions } from '../commands/serve.js'
import type { CliContext } from '../context.js'
import { sweepOnMainThread } from '../gc-tuning.js'
import { readOptionalFile, readToken } from './session-inputs.js'

/** `dsync serve`'s action (registered in commands/serve.ts). */
export async function runServe(ctx: CliContext, o: ServeCliOptions): Promise<void> {
  sweepOnMainThread()
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
