import { stat } from 'node:fs/promises'
import { main } from '../../src/cli/main.js'

/** Runs the CLI in-process; returns its exit code and what it printed. */
export async function runCli(argv: readonly string[], opts: { env?: Record<string, string>; cwd?: string } = {}) {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
    signal: new AbortController().signal,
  })
  return { code, stdout, stderr }
}

/** The bundled CLI (dist/bundle/dsync.cjs), which bin/dsync.js runs only when it was built after
 *  the last compile (as npm test leaves it): the same rule as bin/dsync.js's freshBundle. */
export const BUNDLED_CLI = new URL('../../bundle/dsync.cjs', import.meta.url)

export async function bundleIsFresh(): Promise<boolean> {
  const mtime = async (u: URL): Promise<number | undefined> => (await stat(u).catch(() => undefined))?.mtimeMs
  const bundled = await mtime(BUNDLED_CLI)
  const built = [await mtime(new URL('../../.tsbuildinfo', import.meta.url)), await mtime(new URL('../../.tsbuildinfo-build', import.meta.url))].filter((x) => x !== undefined)
  return bundled !== undefined && built.every((x) => bundled > x)
}
