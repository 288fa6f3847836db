import t from 'tap'
import { join } from 'node:path'
import { chmod, writeFile } from 'node:fs/promises'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { runCli } from '../support/cli.js'

t.test('prints every metric and a verdict for two real files', async (t) => {
  const a = randomBytes(1, 200000)
  const b = new Uint8Array([...a.subarray(0, 150000), ...randomBytes(2, 50000)])
  const dir = await tempTree(t, { a: a, b: b })
  const r = await runCli(['similarity', join(dir, 'a'), join(dir, 'b')])
  t.equal(r.code, 0, r.stderr)
  for (const k of ['jaccard', 'dice', 'lcs', 'containment', 'chunker', 'shared']) t.match(r.stdout, k)
  t.match(r.stdout, /verdict: delta would pay: dice/)
  t.match(r.stdout, /method +sketch: 64-byte windows/)
  t.match(r.stdout, /error +± \d+\.\d%/)
})

t.test('sees edits far smaller than a chunk: 100 bytes in every 1000 changed reads ~90%, not 0', async (t) => {
  const a = randomBytes(5, 300000)
  const parts: Uint8Array[] = []
  for (let p = 0; p < a.length; p += 1000) parts.push(a.subarray(p, p + 900), randomBytes(p + 6, 100))
  const dir = await tempTree(t, { a, b: Buffer.concat(parts) })
  const r = await runCli(['similarity', '--json', join(dir, 'a'), join(dir, 'b')])
  t.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  t.ok(j.chunkMetrics.dice < 0.1, `whole chunks: ${j.chunkMetrics.dice}`)
  t.ok(Math.abs(j.metrics.dice - 0.9) <= Math.max(0.03, j.method.errorBound), `sketch dice ${j.metrics.dice} ± ${j.method.errorBound}`)
  t.ok(j.method.errorBound > 0 && j.method.errorBound < 0.05)
  t.equal(j.method.kind, 'sketch')
  t.equal(j.verdict, 'delta')
})

t.test('--json gives one object; --threshold and --metric change the rule', async (t) => {
  const a = randomBytes(3, 100000)
  const b = new Uint8Array([...a.subarray(0, 60000), ...randomBytes(4, 40000)])
  const dir = await tempTree(t, { a, b })
  const r = await runCli(['similarity', '--json', '--metric', 'jaccard', join(dir, 'a'), join(dir, 'b')])
  t.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  t.equal(j.rule.metric, 'jaccard')
  t.ok(j.metrics.jaccard < 0.5 && j.metrics.dice > 0.5, `j=${j.metrics.jaccard} d=${j.metrics.dice}`)
  t.equal(j.verdict, 'whole')
  const r2 = await runCli(['similarity', '--json', '--threshold', '95%', join(dir, 'a'), join(dir, 'a')])
  t.equal(JSON.parse(r2.stdout).verdict, 'delta')
  const r3 = await runCli(['similarity', '--json', '--chunker', 'fsp', '--avg', '4k', join(dir, 'a'), join(dir, 'b')])
  t.match(JSON.parse(r3.stdout).chunker, { kind: 'fsp', avg: 4096 })
})

t.test('bad input: one clear line, documented exit code, no stack', async (t) => {
  const dir = await tempTree(t, { a: 'hello world', empty: '' })
  const cases: [string[], number, RegExp][] = [
    [['similarity', join(dir, 'a'), join(dir, 'missing')], 3, /missing: no such file/],
    [['similarity', dir, join(dir, 'a')], 3, /is a directory/],
    [['similarity', join(dir, 'a'), join(dir, 'empty')], 3, /empty/],
    [['similarity', '--avg', 'huge', join(dir, 'a'), join(dir, 'a')], 2, /not a size/],
    [['similarity', '--metric', 'cosine', join(dir, 'a'), join(dir, 'a')], 2, /unknown metric/],
    [['similarity', '--threshold', '2', join(dir, 'a'), join(dir, 'a')], 2, /threshold/],
    [['similarity', join(dir, 'a')], 2, /missing required argument/],
  ]
  for (const [argv, code, msg] of cases) {
    const r = await runCli(argv)
    t.equal(r.code, code, argv.join(' '))
    t.match(r.stderr, msg)
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  }
  if (process.getuid?.() !== 0) {
    await writeFile(join(dir, 'locked'), 'x')
    await chmod(join(dir, 'locked'), 0)
    const r = await runCli(['similarity', join(dir, 'a'), join(dir, 'locked')])
    t.equal(r.code, 4)
    t.match(r.stderr, /permission denied/)
  }
})
