/**
 * Benchmark dispatcher: `npm run bench -- <name>…` runs bench/<name>.ts (its exported `run()`),
 * one after the other; with no name it runs the issue-2 set. A new benchmark needs no entry
 * here: a file bench/<name>.ts exporting `run(): Promise<void>` is found by name.
 */
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

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
  for (const name of names) {
    console.log(`\n=== bench/${name}.ts ===`)
    const mod = (await import(`./${name}.js`)) as Partial<BenchModule>
    if (typeof mod.run !== 'function') {
      console.error(`bench/${name}.ts exports no run() function`)
      return 2
    }
    await mod.run()
  }
  return 0
}

process.exitCode = await main(process.argv.slice(2))
