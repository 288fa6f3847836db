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
