import type { Test } from 'tap'
import { startServer, type Channel, type RunningServer, type ServerOptions, type Session, type SessionOptions } from '../../src/net/index.js'

/** Session options with every switch off. */
export const OPTIONS: SessionOptions = Object.freeze({
  dryRun: false, delete: false, checksum: false, threshold: 0.5, metric: 'dice', force: false,
})

/** A server on 127.0.0.1, port 0, closed when the test ends. Log lines are collected in `logs`. */
export async function testServer(
  t: Test,
  onSession: (channel: Channel, session: Session) => Promise<void>,
  opts: Partial<Omit<ServerOptions, 'onSession' | 'log'>> = {},
): Promise<RunningServer & { logs: string[] }> {
  const logs: string[] = []
  const server = await startServer({ host: '127.0.0.1', port: 0, token: null, log: (l) => logs.push(l), onSession, ...opts })
  t.teardown(() => server.close())
  return Object.assign(server, { logs })
}
