import t from 'tap'
import { join } from 'node:path'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { runCli } from '../support/cli.js'

t.test('groups: clusters joined by similar pairs, each with its percentage; unrelated files left out', async (t) => {
  const a = randomBytes(1, 80_000)
  const c = randomBytes(2, 50_000)
  const edit = (x: Uint8Array, seed: number): Uint8Array => {
    const parts: Uint8Array[] = []
    for (let p = 0; p < x.length; p += 2000) parts.push(x.subarray(p, p + 1800), randomBytes(seed + p, 200))
    return Buffer.concat(parts)
  }
  const files: Record<string, Uint8Array> = {
    'a/v1.bin': a,
    'a/v2.bin': edit(a, 10),
    'b/copy-of-a.bin': a,
    'c/one.bin': c,
    'c/two.bin': Buffer.concat([c.subarray(0, 35_000), randomBytes(3, 15_000)]),
  }
  for (let i = 0; i < 15; i++) files[`noise/${i}.bin`] = randomBytes(50 + i, 20_000)
  const dir = await tempTree(t, files)
  const r = await runCli(['groups', '--json', dir])
  t.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  const sets = j.groups.map((g: { files: { path: string }[] }) => g.files.map((f) => f.path).sort())
  t.same(sets, [['a/v1.bin', 'a/v2.bin', 'b/copy-of-a.bin'], ['c/one.bin', 'c/two.bin']])
  const g0 = j.groups[0]
  t.equal(g0.files[0].similarity, 1, 'the reference first')
  t.ok(g0.pairs.length >= 2)
  for (const p of g0.pairs) t.ok(p.similarity >= 0.5 && p.similarity <= 1)
  t.ok(Math.abs(j.groups[1].files[1].similarity - 0.7) < 0.06, `c pair: ${j.groups[1].files[1].similarity}`)

  const high = JSON.parse((await runCli(['groups', '--json', '--threshold', '95%', dir])).stdout)
  t.same(high.groups.map((g: { files: { path: string }[] }) => g.files.map((f) => f.path).sort()), [['a/v1.bin', 'b/copy-of-a.bin']])
  t.equal(high.index.filesRead, 0, 'second run: quick check, nothing read')

  const text = await runCli(['groups', dir])
  t.match(text.stdout, /^The following groups of files are similar \(dice ≥ 50\.0%\)/)
  t.match(text.stdout, /^R 100\.0% {2}\S+/m)
})

t.test('groups: none found, and a missing tree, say so', async (t) => {
  const dir = await tempTree(t, { x: randomBytes(1, 5000), y: randomBytes(2, 5000) })
  const r = await runCli(['groups', dir])
  t.equal(r.code, 0)
  t.match(r.stdout, /No similar files/)
  const bad = await runCli(['groups', join(dir, 'nope')])
  t.equal(bad.code, 3)
  t.match(bad.stderr, /nope/)
})
