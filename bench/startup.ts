/**
 * Startup (issue 8): how long `dsync` takes to start and how many modules it loads, for
 * `--version`, `--help`, `push --help` and a no-op push of a 10-file tree to a local
 * `dsync serve`, against `node -e 0`. Each command is timed as its own process under
 * /usr/bin/time (wall from this process, ms; CPU user+sys and peak RSS from time(1)): warm-up
 * runs, then the median of DSYNC_BENCH_RUNS (default 5), with the code cache (in a temp
 * directory, src/cli/code-cache.ts) and without. Modules are counted in a separate
 * run with test/support/module-log.js (its hooks thread would skew the timings): ES and
 * CommonJS modules, by folder of dist/ and by package.
 *
 * `npm run bench -- startup [--modules]`: --modules also lists the modules of each command.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GENERATIONS } from '../src/cli/code-cache.js'
import { DSYNC_BIN, spawnServer } from './support/procs.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'
import { median } from './support/timing.js'

const MODULE_LOG = fileURLToPath(new URL('../test/support/module-log.js', import.meta.url))
/** The repository, as a URL prefix: module paths are shown relative to it (dist/src/sync/…). */
const REPO = new URL('../../', import.meta.url).href
const RUNS = Number(process.env['DSYNC_BENCH_RUNS'] ?? 5)

interface Measured {
  wallMs: number
  cpuMs: number
  rssMiB: number
}

/** One process under /usr/bin/time: wall (ms, measured here), CPU user+sys (ms) and peak RSS. */
function timed(args: readonly string[], codeCache: string): Measured {
  const t0 = performance.now()
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...args], { encoding: 'utf8', env: { ...process.env, DSYNC_CACHE_DIR: codeCache } })
  const wallMs = performance.now() - t0
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  const [user, sys, rssKb] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number)
  return { wallMs, cpuMs: (user! + sys!) * 1000, rssMiB: rssKb! / 1024 }
}

/** `codeCache`: the directory of the code V8 compiled in earlier runs (src/cli/code-cache.ts),
 *  '' for none. The warm-up runs fill it: a command's file is rewritten after each of its first
 *  GENERATIONS runs, then only read, as in a user's runs after the first few. */
function medianOf(args: readonly string[], codeCache: string): Measured {
  for (let i = 0; i < (codeCache === '' ? 1 : GENERATIONS); i++) timed(args, codeCache) // warm-up: the file cache, the code cache
  const runs = Array.from({ length: RUNS }, () => timed(args, codeCache))
  return { wallMs: median(runs.map((r) => r.wallMs)), cpuMs: median(runs.map((r) => r.cpuMs)), rssMiB: median(runs.map((r) => r.rssMiB)) }
}

/** The files one run loads (file: URLs made relative: dist/src/sync/…, node_modules/ws/…). */
function modulesOf(args: readonly string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'dsync-modlog-'))
  try {
    const log = join(dir, 'modules.txt')
    writeFileSync(log, '')
    execFileSync(process.execPath, ['--import', MODULE_LOG, ...args], { env: { ...process.env, DSYNC_MODULE_LOG: log }, stdio: 'ignore' })
    return [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))].map((u) => (u.startsWith(REPO) ? u.slice(REPO.length) : u))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `dist/src/sync/x.js` → `dist/src/sync`; `node_modules/ws/lib/x.js` → `ws`. */
function groupOf(path: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)
  if (pkg) return pkg[1]!
  const m = /^(dist\/(?:src\/[^/]+|protocol|test|bench))/.exec(path)
  return m ? m[1]!.replace(/\.js$/, '') : path
}

function summarize(paths: readonly string[]): string {
  const counts = new Map<string, number>()
  for (const p of paths) counts.set(groupOf(p), (counts.get(groupOf(p)) ?? 0) + 1)
  return [...counts].sort((a, b) => b[1] - a[1]).map(([g, n]) => `${g.replace(/^dist\/src\//, '')} ${n}`).join(', ')
}

export async function run(): Promise<void> {
  printEnvironment()
  const listModules = process.argv.includes('--modules')
  const tmp = mkdtempSync(join(tmpdir(), 'dsync-startup-'))
  const src = join(tmp, 'src')
  mkdirSync(join(tmp, 'served'))
  mkdirSync(src)
  const server = await spawnServer(join(tmp, 'served'))
  try {
    for (let i = 0; i < 10; i++) writeFileSync(join(src, `file-${i}.txt`), `file ${i}\n`.repeat(100 + i))
    const push = [DSYNC_BIN, 'push', src, server.url]
    execFileSync(process.execPath, push) // the first push sends the files; the measured ones are no-ops
    const cases: [string, string[]][] = [
      ['node -e 0', ['-e', '0']],
      ['dsync --version', [DSYNC_BIN, '--version']],
      ['dsync --help', [DSYNC_BIN, '--help']],
      ['dsync push --help', [DSYNC_BIN, 'push', '--help']],
      ['dsync serve --help', [DSYNC_BIN, 'serve', '--help']],
      ['dsync push (no-op, 10 files)', push],
    ]
    const rows: Cell[][] = []
    for (const [i, [name, args]] of cases.entries()) {
      // A cache of its own for each case: a command's file settles after its first runs, and a
      // `push --help` must not settle push's (code-cache.ts keeps helps under `cli` anyway).
      const m = medianOf(args, join(tmp, `code-cache-${i}`))
      const cold = medianOf(args, '')
      const mods = modulesOf(args)
      rows.push([name, m.wallMs, m.cpuMs, cold.wallMs, cold.cpuMs, m.rssMiB, mods.length, mods.filter((p) => p.startsWith('dist/')).length, summarize(mods)])
      if (listModules) console.log(`\n${name}:\n  ${mods.join('\n  ')}`)
    }
    printTable(
      `Startup, median of ${RUNS} (wall ms measured here; CPU user+sys ms and peak RSS MiB from /usr/bin/time), with the code V8 compiled in earlier runs and without it (DSYNC_CACHE_DIR=, every run compiles); modules as the module log sees them: the bundle is one script, not listed`,
      ['command', 'wall ms', 'CPU ms', 'wall no cache', 'CPU no cache', 'RSS MiB', 'modules', 'of dist/', 'by folder or package'],
      rows,
      0,
    )
  } finally {
    server.child.kill('SIGINT')
    await server.exited
    rmSync(tmp, { recursive: true, force: true })
  }
}
