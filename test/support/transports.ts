import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import type { ClientOptions } from '../../src/sync/index.js'
import { clientOpts, startServer } from './sync.js'

/** The repository, seen from dist/test/support/ (where this runs) or test/support/. */
export const REPO = fileURLToPath(new URL(import.meta.url.includes('/dist/') ? '../../../' : '../../', import.meta.url))
/** The built CLI, as a remote host would run it. */
export const DSYNC_BIN = `${REPO}bin/dsync.js`
/** `--remote-dsync` for tests: this Node and this checkout's CLI. */
export const REMOTE_DSYNC = `'${process.execPath}' '${DSYNC_BIN}'`
/** `-e` for tests: a stand-in for ssh that runs the remote command on this machine. */
export const LOCAL_RSH = `sh '${REPO}test/support/local-rsh.sh'`

/** The transports the sync tests run over. */
export const TRANSPORTS = ['ws', 'stdio'] as const
export type TransportName = (typeof TRANSPORTS)[number]

/** A served tree and how to reach it. */
export interface Target {
  readonly url: string
  /** Client options for this transport (the test token for ws; -e and --remote-dsync for stdio). */
  opts(extra?: Partial<ClientOptions>): ClientOptions
}

/**
 * Serves `root` over `kind`: a real `dsync serve` on 127.0.0.1 (ws), or, for stdio, nothing yet:
 * each push or pull starts `node bin/dsync.js serve --stdio` through the `-e` stand-in, as ssh
 * would on a remote host.
 */
export async function serveOver(t: Test, kind: TransportName, root: string): Promise<Target> {
  if (kind === 'ws') {
    const server = await startServer(t, root)
    return { url: server.url, opts: (extra = {}) => clientOpts(extra) }
  }
  return {
    url: `ssh://localhost${root}`,
    opts: (extra = {}) => clientOpts({ token: null, rsh: LOCAL_RSH, remoteDsync: REMOTE_DSYNC, ...extra }),
  }
}

/** Runs the built CLI as a child process (the real `bin/dsync.js`), as a user would. */
export async function runDsync(argv: readonly string[], opts: { env?: Record<string, string> } = {}) {
  const { spawn } = await import('node:child_process')
  const child = spawn(process.execPath, [DSYNC_BIN, ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => (stdout += b))
  child.stderr.on('data', (b: Buffer) => (stderr += b))
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
  return { code, stdout, stderr }
}
