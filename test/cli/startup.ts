import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCli } from '../support/cli.js'
import { tempTree } from '../support/temp.js'

// What `dsync` loads to start (issue 8, LAZY_LOAD in src/cli/main.ts): the commands register
// their options with commander and import the library only when they run, so printing the
// version, a help or a usage error loads none of sync/, net/, store/ or compress/ (nor ws,
// lmdb, zstd, cli-progress). This checks which modules are loaded, not how long they take:
// bench/startup.ts has the timings.

const BIN = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))
const MODULE_LOG = fileURLToPath(new URL('../support/module-log.js', import.meta.url))
const DIST_SRC = new URL('../../src/', import.meta.url).href
const ROOT = new URL('../../../', import.meta.url)
const BUNDLE = new URL('../../bundle/', import.meta.url).href
const DIST = new URL('../../', import.meta.url)
const HEAVY_LAYERS = ['sync', 'net', 'store', 'compress']
const HEAVY_PACKAGES = ['ws', 'lmdb', 'msgpackr', '@bokuweb/zstd-wasm', 'cli-progress']

/** Runs the real executable with `args`; returns its exit code and the modules it loaded. */
async function loadedBy(args: readonly string[]): Promise<{ code: number; modules: string[]; files: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'dsync-modules-'))
  try {
    const log = join(dir, 'modules.txt')
    const code = await new Promise<number>((resolve, reject) => {
      execFile(process.execPath, ['--import', MODULE_LOG, BIN, ...args], { env: { ...process.env, DSYNC_MODULE_LOG: log } }, (err) =>
        err === null ? resolve(0) : typeof err.code === 'number' ? resolve(err.code) : reject(err),
      )
    })
    const files = (await readFile(log, 'utf8')).split('\n').filter(Boolean)
    return { code, modules: await unbundled(files), files }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The modules loaded, with each chunk of the bundle (bin/bundle.js, when bin/dsync.js runs it)
 *  replaced by the modules esbuild put in it (dist/bundle/meta.json). */
async function unbundled(modules: readonly string[]): Promise<string[]> {
  if (!modules.some((m) => m.startsWith(BUNDLE))) return [...modules]
  const meta = JSON.parse(await readFile(new URL('meta.json', BUNDLE), 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> }
  return modules.flatMap((m) => {
    if (!m.startsWith(BUNDLE)) return [m]
    const out = meta.outputs[`dist/bundle/${m.slice(BUNDLE.length)}`]
    if (out === undefined) throw new Error(`${m}: not a chunk of dist/bundle/meta.json (a stale bundle?)`)
    return Object.keys(out.inputs).map((input) => new URL(input, ROOT).href)
  })
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
  const mtime = async (u: URL): Promise<number | undefined> => (await stat(u).catch(() => undefined))?.mtimeMs
  const bundled = await mtime(new URL('main.js', BUNDLE))
  const built = [await mtime(new URL('.tsbuildinfo', DIST)), await mtime(new URL('.tsbuildinfo-build', DIST))].filter((x) => x !== undefined)
  const fresh = bundled !== undefined && built.every((x) => bundled > x)
  const { code, files } = await loadedBy(['--version'])
  t.equal(code, 0)
  t.equal(files.includes(`${BUNDLE}main.js`), fresh, fresh ? 'the bundle ran' : 'no fresh bundle: not run')
  t.equal(files.includes(`${DIST_SRC}cli/main.js`), !fresh, fresh ? 'the modules did not' : 'the compiled modules ran')
})
