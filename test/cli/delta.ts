import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { runBinary } from './support/run-binary.js'

const seed = randomBytes(1, 400000)
const target = Buffer.concat([seed.subarray(0, 200000), Buffer.from('a small edit'), seed.subarray(200100)])

t.test('delta of a file against a signature is small; --stats reports it on stderr', async (t) => {
  const dir = await tempTree(t, { seed, target })
  t.equal((await runBinary(['signature', 'seed', 'sig'], { cwd: dir })).code, 0)
  const r = await runBinary(['delta', '--stats', 'sig', 'target', 'd'], { cwd: dir })
  t.equal(r.code, 0, r.stderr)
  const d = await readFile(join(dir, 'd'))
  t.ok(d.length < 2000, `delta ${d.length} bytes`)
  t.match(r.stderr, /target 390\.\d+ KiB: copied .*literal .*delta /)
  t.same((await readdir(dir)).sort(), ['d', 'seed', 'sig', 'target'])
})

t.test("'-': target from stdin, delta to stdout; signature from stdin", async (t) => {
  const dir = await tempTree(t, { seed, target })
  await runBinary(['signature', 'seed', 'sig'], { cwd: dir })
  const a = await runBinary(['delta', 'sig', '-', '-'], { cwd: dir, stdin: target })
  t.equal(a.code, 0, a.stderr)
  const b = await runBinary(['delta', '-', 'target', 'd'], { cwd: dir, stdin: await readFile(join(dir, 'sig')) })
  t.equal(b.code, 0, b.stderr)
  t.ok(a.bytes.equals(await readFile(join(dir, 'd'))), 'the same delta either way')
})

t.test('bad input: clear errors and exit codes, no DELTAFILE written', async (t) => {
  const dir = await tempTree(t, { seed, target, junk: 'not a signature at all' })
  await runBinary(['signature', 'seed', 'sig'], { cwd: dir })
  const sig = await readFile(join(dir, 'sig'))
  const cases: [string[], number, RegExp, Uint8Array?][] = [
    [['delta', 'junk', 'target', 'd'], 5, /junk: not a dsync signature/],
    [['delta', 'sig', 'missing', 'd'], 3, /missing: no such file/],
    [['delta', 'missing', 'target', 'd'], 3, /missing: no such file/],
    [['delta', '-', '-', 'd'], 2, /cannot both be '-'/],
    [['delta', '-', 'target', 'd'], 5, /stdin: signature is corrupted or truncated/, sig.subarray(0, sig.length - 1)],
  ]
  for (const [argv, code, msg, stdin] of cases) {
    const r = await runBinary(argv, { cwd: dir, stdin })
    t.equal(r.code, code, argv.join(' '))
    t.match(r.stderr, msg)
  }
  t.notOk((await readdir(dir)).includes('d'))
})
