import t, { type Test } from 'tap'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { runBinary } from './support/run-binary.js'

const seed = randomBytes(1, 300000)
const target = Buffer.concat([randomBytes(2, 500), seed.subarray(0, 150000), seed.subarray(160000)])

async function setup(t: Test) {
  const dir = await tempTree(t, { seed, target, out: 'previous' })
  await runBinary(['signature', 'seed', 'sig'], { cwd: dir })
  await runBinary(['delta', 'sig', 'target', 'd'], { cwd: dir })
  return dir
}

t.test('signature → delta → patch rebuilds the target; in place works; delta from stdin', async (t) => {
  const dir = await setup(t)
  let r = await runBinary(['patch', 'seed', 'd', 'rebuilt'], { cwd: dir })
  t.equal(r.code, 0, r.stderr)
  t.ok((await readFile(join(dir, 'rebuilt'))).equals(target))
  r = await runBinary(['patch', 'seed', '-', 'seed'], { cwd: dir, stdin: await readFile(join(dir, 'd')) })
  t.equal(r.code, 0, r.stderr)
  t.ok((await readFile(join(dir, 'seed'))).equals(target), 'patched in place')
  t.same((await readdir(dir)).sort(), ['d', 'out', 'rebuilt', 'seed', 'sig', 'target'])
})

t.test('corrupt delta, wrong seed, bad arguments: exit code, one line, OUT untouched', async (t) => {
  const dir = await setup(t)
  const d = await readFile(join(dir, 'd'))
  const flipped = Buffer.from(d)
  flipped[flipped.length - 1]! ^= 0x10
  await writeFile(join(dir, 'flipped'), flipped)
  await writeFile(join(dir, 'cut'), d.subarray(0, d.length - 40))
  await writeFile(join(dir, 'other'), randomBytes(9, seed.length))
  const cases: [string[], number, RegExp][] = [
    [['patch', 'seed', 'flipped', 'out'], 5, /does not match the SHA-256/],
    [['patch', 'seed', 'cut', 'out'], 5, /cut: delta is truncated/],
    [['patch', 'other', 'd', 'out'], 5, /SHA-256/],
    [['patch', 'target', 'd', 'out'], 5, /wrong seed/],
    [['patch', 'seed', 'missing', 'out'], 3, /missing: no such file/],
    [['patch', '-', 'd', 'out'], 2, /SEED cannot be '-'/],
    [['patch', 'seed', 'd', '-'], 2, /OUT cannot be '-'/],
  ]
  for (const [argv, code, msg] of cases) {
    const r = await runBinary(argv, { cwd: dir })
    t.equal(r.code, code, argv.join(' '))
    t.match(r.stderr, msg)
    t.equal(r.stderr.split('\n').length, 2, 'one line')
  }
  t.equal(await readFile(join(dir, 'out'), 'utf8'), 'previous')
  t.notOk((await readdir(dir)).some((n) => n.startsWith('.dsync-tmp-')), 'no temp file left')
})
