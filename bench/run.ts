/**
 * Benchmark dispatcher: `npm run bench -- <name>…` runs bench/<name>.ts (its exported `run()`),
 * one after the other; with no name it runs the issue-2 set. A new benchmark needs no entry
 * here: a file bench/<name>.ts exporting `run(): Promise<void>` is found by name.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadCodecs } from '../src/compress/index.js'

/** What `npm run bench` runs with no argument (issue 2: chunking, hashing, similarity). */
const DEFAULT_SET = ['chunk', 'hash', 'similarity']

interface BenchModule {
  run(): Promise<void>
}

function available(): string[] {
  const dir = fileURLToPath(new URL('.', import.meta.url))
  return readdirSync(dir)
    .filter((f) => f.endsWith('.js') && f !== 'run.js')
    .map((f) => f.slice(0, -3))
    .sort()
}

/**
 * NODE_EXTRA_CA_CERTS (these sandboxes set it for their proxy) makes every Node process parse
 * that bundle of CA certificates as it starts: `node -e 0` took ~85 ms with it here, ~25 ms
 * without, and each dsync client is a process start. A user's shell does not set it, the runs
 * here use no TLS, and rsync does not read it: the benches and the tools they start run
 * without it. What it cost is printed first, so a reader can add it back.
 */
function withoutExtraCaCerts(): void {
  const file = process.env['NODE_EXTRA_CA_CERTS']
  if (file === undefined) return
  const startMs = (env: NodeJS.ProcessEnv): number => {
    const times: number[] = []
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now()
      spawnSync(process.execPath, ['-e', '0'], { env, stdio: 'ignore' })
      times.push(performance.now() - t0)
    }
    return times.sort((a, b) => a - b)[2]!
  }
  const clean = { ...process.env }
  delete clean['NODE_EXTRA_CA_CERTS']
  const withIt = startMs(process.env)
  const without = startMs(clean)
  delete process.env['NODE_EXTRA_CA_CERTS']
  console.log(`NODE_EXTRA_CA_CERTS=${file} is unset for the benches' processes: \`node -e 0\` takes ${withIt.toFixed(0)} ms with it, ${without.toFixed(0)} ms without (median of 5)`)
}

async function main(argv: readonly string[]): Promise<number> {
  // Names come first; from the first `--flag` on, the arguments are the benches' own (each
  // reads process.argv itself, e.g. `npm run bench -- chaos --kills 10`).
  const firstFlag = argv.findIndex((a) => a.startsWith('--'))
  const given = firstFlag < 0 ? argv : argv.slice(0, firstFlag)
  const names = given.length > 0 ? given : DEFAULT_SET
  const known = available()
  const unknown = names.filter((n) => !known.includes(n))
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.join(', ')}: choose from ${known.join(', ')} (run npm run build first if one is missing)`)
    return 2
  }
  withoutExtraCaCerts()
  // The dsync processes the benches start keep their compiled code (src/cli/code-cache.ts) here,
  // not in the user's ~/.cache/dsync: each bench run starts without it, as a first install does,
  // and warms it in its first runs.
  const codeCache = process.env.DSYNC_CACHE_DIR === undefined ? mkdtempSync(join(tmpdir(), 'dsync-bench-code-cache-')) : undefined
  if (codeCache !== undefined) process.env.DSYNC_CACHE_DIR = codeCache
  // The library's modules are imported one by one here: zstd loads first (src/compress/codec.ts).
  await loadCodecs()
  for (const name of names) {
    console.log(`\n=== bench/${name}.ts ===`)
    const mod = (await import(`./${name}.js`)) as Partial<BenchModule>
    if (typeof mod.run !== 'function') {
      console.error(`bench/${name}.ts exports no run() function`)
      return 2
    }
    await mod.run()
  }
  if (codeCache !== undefined) rmSync(codeCache, { recursive: true, force: true })
  return 0
}

process.exitCode = await main(process.argv.slice(2))
