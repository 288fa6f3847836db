import { lstat, readFile, readlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { Test } from 'tap'
import { walkTree } from '../../src/fs/index.js'
import { serve, type ClientOptions } from '../../src/sync/index.js'

export const TOKEN = 'test-token-0123456789'

/** A real dsync server on 127.0.0.1, a random port, closed when the test ends. */
export async function startServer(t: Test, root: string, opts: { token?: string | null; log?: string[]; versions?: readonly number[] } = {}) {
  const ac = new AbortController()
  const server = await serve({
    root,
    host: '127.0.0.1',
    port: 0,
    token: opts.token === undefined ? TOKEN : opts.token,
    log: (l) => opts.log?.push(l),
    signal: ac.signal,
    ...(opts.versions && { versions: opts.versions }),
  })
  t.teardown(async () => {
    ac.abort()
    await server.close()
  })
  return server
}

/** Client options for tests: the test token, a live signal. */
export function clientOpts(extra: Partial<ClientOptions> = {}): ClientOptions {
  return { token: TOKEN, signal: new AbortController().signal, ...extra }
}

/** Everything about a tree that a sync must carry over but times: kind, content, mode, link
 *  target. Compare two with `t.same`; compare times with `sameMtimes`. */
export async function describeTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for await (const e of walkTree(root)) {
    const abs = join(root, e.path)
    const st = await lstat(abs)
    const body =
      e.kind === 'file' ? (await readFile(abs)).toString('base64') : e.kind === 'symlink' ? `-> ${await readlink(abs)}` : 'dir'
    const mode = e.kind === 'symlink' ? '' : (st.mode & 0o7777).toString(8)
    out[e.path] = `${e.kind} ${mode} ${body.length > 64 ? body.length + ':' + body.slice(0, 32) : body}`
  }
  return out
}

/** Paths of files and dirs whose mtimes differ by a millisecond or more between two trees.
 *  (utimes() goes through a double of seconds, so equal times may differ by < 1 µs.) */
export async function mtimeMismatches(a: string, b: string): Promise<string[]> {
  const bad: string[] = []
  for await (const e of walkTree(a)) {
    if (e.kind === 'symlink') continue
    const other = await lstat(join(b, e.path)).catch(() => undefined)
    if (other === undefined || Math.abs(other.mtimeMs - e.mtimeMs) >= 1) bad.push(e.path)
  }
  return bad
}
