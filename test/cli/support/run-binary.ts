import { main } from '../../../src/cli/main.js'

/** Runs the CLI in-process with binary stdin/stdout (for `-` arguments). */
export async function runBinary(argv: readonly string[], opts: { cwd: string; stdin?: Uint8Array }) {
  const out: Uint8Array[] = []
  let stdout = ''
  let stderr = ''
  const code = await main(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: {},
    cwd: opts.cwd,
    signal: new AbortController().signal,
    stdio: {
      stdin: (async function* () {
        if (opts.stdin) for (let i = 0; i < opts.stdin.length; i += 10000) yield opts.stdin.subarray(i, i + 10000)
      })(),
      stdout: { write: async (b: Uint8Array) => void out.push(b.slice()) },
    },
  })
  return { code, stdout, stderr, bytes: Buffer.concat(out) }
}
