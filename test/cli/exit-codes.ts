import t from 'tap'
import { readFile } from 'node:fs/promises'
import { EXIT_CODE_TABLE, EXIT_CODES } from '../../src/cli/exit-codes.js'

t.test('the README exit-code table matches src/cli/exit-codes.ts', async (t) => {
  const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8')
  const section = readme.split('## Exit codes')[1]!.split('\n## ')[0]!
  const rows = [...section.matchAll(/^\| (\d+) \| (.+?) \|$/gm)].map((m) => [Number(m[1]), m[2]!.replace(/\\\|/g, '|')])
  t.same(rows, EXIT_CODE_TABLE.map(([n, s]) => [n, s]))
})

t.test('every error code maps to a documented exit code', async (t) => {
  const documented = new Set(EXIT_CODE_TABLE.map(([n]) => n))
  for (const [code, n] of Object.entries(EXIT_CODES)) t.ok(documented.has(n), `${code} → ${n}`)
})
