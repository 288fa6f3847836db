/**
 * The CLI run from its compiled modules (dist/src/cli/main.js), as bin/dsync.js runs it when the
 * bundle is older than the last compile: for tests of which modules a command loads
 * (test/cli/startup.ts), which the one-script bundle does not show. Usage: node cli-modules.js ARGS…
 */
import { main } from '../../src/cli/main.js'

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  signal: new AbortController().signal,
})
