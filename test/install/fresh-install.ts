import t from 'tap'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// What protects the README's first command on a machine with only Node and npm: a full install
// from an empty npm cache with no compiler on PATH, then `npx dsync demo` (fresh-install.sh).
// It downloads every package again: 3.5-6.5 min on this shared 2-core box at load 16-21 (npm ci
// 170-260 s of it, the demo 30-70 s); it gets no faster than the registry and one tsc build.
// DSYNC_SKIP_FRESH_INSTALL=1 skips it for quick local runs; CI (.ci/run) always runs it.
const script = fileURLToPath(new URL('../../../test/install/fresh-install.sh', import.meta.url))
const skip = process.env.DSYNC_SKIP_FRESH_INSTALL === '1' ? 'DSYNC_SKIP_FRESH_INSTALL=1' : false

t.setTimeout(15 * 60_000)

t.test('npm ci with no compiler and an empty cache, then npx dsync demo', { skip }, async (t) => {
  const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (b: Buffer) => (out += b.toString()))
  child.stderr.on('data', (b: Buffer) => (out += b.toString()))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  t.equal(code, 0, out.slice(-4000))
  t.match(out, /fresh-install: ok/)
  t.comment(out.split('\n').filter((l) => l.startsWith('fresh-install:')).join('\n'))
})
