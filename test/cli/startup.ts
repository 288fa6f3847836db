import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundleIsFresh, runCli } from '../support/cli.js'
import { startServer, TOKEN } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

// What `dsync` loads to start (issue 8, LAZY_LOAD in src/cli/main.ts): the commands register
// their options with commander and import the library only when they run, so printing the
// version, a help or a usage error loads none of sync/, net/, store/ or compress/ (nor ws,
// lmdb, zstd, cli-progress). The modules are those of dist/src, run one by one
// (test/support/cli-modules.ts): the bundle bin/dsync.js runs is one script that holds them all
// (bin/bundle.js), and runs each only when first needed, as here. This checks which modules are
// loaded, not how long they take: bench/startup.ts has the timings.

const BIN = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))
const MODULES_CLI = fileURLToPath(new URL('../support/cli-modules.js', import.meta.url))
const MODULE_LOG = fileURLToPath(new URL('../support/module-log.js', import.meta.url))
const DIST_SRC = new URL('../../src/', import.meta.url).href
const LAUNCHER = new URL('../../bundle/launch.cjs', import.meta.url).href
const HEAVY_LAYERS = ['sync', 'net', 'store', 'compress']
const HEAVY_PACKAGES = ['ws', 'lmdb', 'msgpackr', '@bokuweb/zstd-wasm', 'cli-progress']
/** Packages the bundle leaves out (bin/bundle.js), which its runs show too, and which a push
 *  loads before it connects (lmdb comes with the tree's state, after). */
const UNBUNDLED_PACKAGES = ['msgpackr', '@bokuweb/zstd-wasm']

/** Runs `script` (the real executable, or the CLI's modules) with `args`; returns its exit code
 *  and the modules it loaded. */
async function loadedBy(args: readonly string[], script = MODULES_CLI): Promise<{ code: number; modules: string[]; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'dsync-modules-'))
  try {
    const log = join(dir, 'modules.txt')
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve, reject) => {
      execFile(process.execPath, ['--import', MODULE_LOG, script, ...args], { env: { ...process.env, DSYNC_MODULE_LOG: log, DSYNC_CACHE_DIR: '' } }, (err, _out, stderr) =>
        err === null ? resolve({ code: 0, stderr }) : typeof err.code === 'number' ? resolve({ code: err.code, stderr }) : reject(err),
      )
    })
    return { code, modules: (await readFile(log, 'utf8')).split('\n').filter(Boolean), stderr }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The loaded modules of the heavy layers and packages, as `net/index.js`, `ws/lib/sender.js`. */
function heavy(modules: readonly string[]): string[] {
  const layers = modules.filter((m) => HEAVY_LAYERS.some((l) => m.startsWith(`${DIST_SRC}${l}/`))).map((m) => m.slice(DIST_SRC.length))
  const packages = modules.filter((m) => HEAVY_PACKAGES.some((p) => m.includes(`/node_modules/${p}/`))).map((m) => m.replace(/^.*\/node_modules\//, ''))
  return [...layers, ...packages]
}

t.test('--version, --help, a command\'s --help and a usage error load no sync, net, store or compress module', async (t) => {
  const cases: [string[], number][] = [
    [['--version'], 0],
    [['--help'], 0],
    [['push', '--help'], 0],
    [['similarity', '--help'], 0],
    [['serve', '--help'], 0],
    [['push', 'only-one-arg'], 2],
  ]
  for (const [args, exit] of cases) {
    const { code, modules } = await loadedBy(args)
    t.equal(code, exit, `dsync ${args.join(' ')} exits ${exit}`)
    t.ok(modules.some((m) => m.endsWith('/commander/lib/command.js')) && modules.includes(`${DIST_SRC}cli/main.js`), 'the log lists what was loaded')
    t.same(heavy(modules), [], `dsync ${args.join(' ')}: no heavy module`)
  }
})

t.test('a command that runs loads them, when its action runs (the log sees lazy imports)', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha' })
  const { code, modules } = await loadedBy(['push', home, 'ws://127.0.0.1:1'])
  t.equal(code, 6, 'nothing listens on port 1: NETWORK')
  const loaded = heavy(modules)
  for (const layer of HEAVY_LAYERS) t.ok(loaded.some((m) => m.startsWith(`${layer}/`)), `${layer}/ loaded`)
  t.notOk(loaded.some((m) => m.startsWith('cli-progress/')), 'no bar asked for: cli-progress not loaded')
})

t.test('serve\'s caps show their defaults (the server\'s own, src/choices.ts) in `serve --help` and `help serve`', async (t) => {
  for (const argv of [['serve', '--help'], ['help', 'serve']]) {
    const help = await runCli(argv)
    t.equal(help.code, 0)
    t.match(help.stdout, /--max-connections <n>[\s\S]*\(default: 64\)/, argv.join(' '))
    t.match(help.stdout, /--max-sessions <n>[\s\S]*\(default: 64\)/, argv.join(' '))
  }
})

t.test('bin/dsync.js runs the bundle when it was built after the last compile (as npm test leaves it), else the compiled modules', async (t) => {
  const fresh = await bundleIsFresh()
  const { code, modules } = await loadedBy(['--version'], BIN)
  t.equal(code, 0)
  t.equal(modules.includes(LAUNCHER), fresh, fresh ? 'the bundle ran (through its launcher, dist/bundle/launch.cjs)' : 'no fresh bundle: not run')
  t.equal(modules.includes(`${DIST_SRC}cli/main.js`), !fresh, fresh ? 'the modules did not' : 'the compiled modules ran')
  t.same(heavy(modules), [], 'and --version loads none of the packages left out of it')
  if (!fresh) return
  const push = await loadedBy(['push', await tempTree(t, { 'a.txt': 'alpha' }), 'ws://127.0.0.1:1'], BIN)
  t.equal(push.code, 6, 'nothing listens on port 1: NETWORK')
  for (const p of UNBUNDLED_PACKAGES) t.ok(push.modules.some((m) => m.includes(`/node_modules/${p}/`)), `a push from the bundle loads ${p}`)
})

t.test('--debug runs the compiled modules, whose stack names the TypeScript sources (the bundle is a few long lines)', async (t) => {
  const { code, modules, stderr } = await loadedBy(['push', '/nonexistent-dsync-tree', 'ws://127.0.0.1:1', '--debug'], BIN)
  t.equal(code, 3, 'NOT_FOUND')
  t.ok(modules.includes(`${DIST_SRC}cli/main.js`), 'the compiled modules ran')
  t.notOk(modules.includes(LAUNCHER), 'not the bundle')
  t.match(stderr, /^dsync: \/nonexistent-dsync-tree: no such file or directory/m, 'the error')
  t.match(stderr, /at .*src\/sync\/session\.ts:\d+:\d+/, 'a frame in src/sync/session.ts, through the source maps')
})

t.test("a push's --json through a pipe read slowly comes whole", async (t) => {
  // --json is one write at the end; of 3,000 files it is far more than a pipe holds (64 KiB),
  // and the reader here starts only after a pause: the process must not end before it is out.
  const files: Record<string, string> = {}
  for (let i = 0; i < 3000; i++) files[`folder-${i % 30}/a-file-with-a-long-name-${i}.txt`] = `file ${i}\n`
  const local = await tempTree(t, files)
  const server = await startServer(t, await tempTree(t))
  const piped = await new Promise<string>((resolve, reject) =>
    execFile('sh', ['-c', '"$0" "$1" push "$2" "$3" --json | (sleep 0.5; cat)', process.execPath, BIN, local, `${server.url}/d`], {
      env: { ...process.env, DSYNC_TOKEN: TOKEN }, maxBuffer: 1 << 30,
    }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
  )
  t.ok(piped.length > 4 * 64 * 1024, `the output (${piped.length} bytes) is more than a pipe holds`)
  const result = JSON.parse(piped) as { ok: boolean; events: { action: string }[] }
  t.equal(result.ok, true)
  t.equal(result.events.filter((e) => e.action === 'new').length, 3000, 'and came through the pipe whole')
})
