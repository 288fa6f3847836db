import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runCli } from '../support/cli.js'
import { tempTree } from '../support/temp.js'
import { startServer, TOKEN, describeTree } from '../support/sync.js'

t.test('push and pull from the CLI: -v itemizes, --stats sums up, --json is one object', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha\n'.repeat(3000), 'b/c.txt': 'gamma' })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  const env = { DSYNC_TOKEN: TOKEN }
  const r = await runCli(['push', '-v', '--stats', home, server.url], { env })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^new\s+a\.txt/m)
  t.match(r.stdout, /speedup/)
  t.match(r.stdout, /2 files transferred/)
  const again = await runCli(['push', '--json', home, server.url], { env })
  const j = JSON.parse(again.stdout)
  t.equal(j.summary.transferred, 0)
  t.ok(j.events.every((e: { action: string }) => e.action === 'unchanged'))
  t.equal(j.events.length, 2, '--json lists every file, unchanged ones too')
  t.equal(j.summary.unchanged, 2)
  const itemized = await runCli(['push', '-vv', '--stats', home, server.url], { env })
  t.match(itemized.stdout, /^unchanged\s+a\.txt/m, '-vv itemizes unchanged files as they are settled')
  t.match(itemized.stdout, /2 unchanged/, 'and the totals count them')
  const dest = join(await tempTree(t), 'mirror')
  const p = await runCli(['pull', server.url, dest], { env })
  t.equal(p.code, 0, p.stderr)
  t.same(await describeTree(dest), await describeTree(home))
})

t.test('errors: wrong token 7, no server 6, missing directory 3, bad option 2; one line, no stack', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'x' })
  const server = await startServer(t, await tempTree(t))
  const tokenFile = join(home, '..', 'wrong-token')
  await writeFile(tokenFile, 'not the token\n')
  const cases: [string[], Record<string, string>, number, RegExp][] = [
    [['push', home, server.url, '--token-file', tokenFile], {}, 7, /auth|token/i],
    [['push', home, server.url], {}, 7, /auth|token/i],
    [['push', home, 'ws://127.0.0.1:1'], { DSYNC_TOKEN: TOKEN }, 6, /127\.0\.0\.1:1/],
    [['push', join(home, 'missing'), server.url], { DSYNC_TOKEN: TOKEN }, 3, /missing/],
    [['push', '--threshold', 'lots', home, server.url], { DSYNC_TOKEN: TOKEN }, 2, /threshold/],
  ]
  for (const [argv, env, code, msg] of cases) {
    const r = await runCli(argv, { env })
    t.equal(r.code, code, `${argv.join(' ')}: ${r.stderr}`)
    t.match(r.stderr, msg)
    t.notMatch(r.stderr, /\n\s+at /)
  }
  const ok = await runCli(['push', home, server.url], { env: { DSYNC_TOKEN: TOKEN } })
  t.equal(ok.code, 0, 'the server still serves a good client after the bad ones')
})

t.test('-vv shows the seeds weighed for a file, best first with their similarity; --json carries them', async (t) => {
  const { randomBytes } = await import('../support/random.js')
  const a = randomBytes(1, 300_000)
  const b = randomBytes(2, 300_000)
  const work = await tempTree(t, {
    'one.bin': a,
    'two.bin': Buffer.concat([a.subarray(0, 100_000), b.subarray(0, 200_000)]),
    'three.bin': b,
  })
  // new.bin: 5/6 of one.bin, 1/3 of that shared with two.bin, nothing of three.bin
  const home = await tempTree(t, { 'new.bin': Buffer.concat([a.subarray(0, 250_000), randomBytes(3, 50_000)]) })
  const server = await startServer(t, work)
  const env = { DSYNC_TOKEN: TOKEN }
  const r = await runCli(['push', '-vv', '-n', home, server.url], { env })
  t.equal(r.code, 0, r.stderr)
  const lines = r.stdout.split('\n')
  const at = lines.findIndex((l) => /^delta\s+new\.bin\s+from one\.bin/.test(l))
  t.ok(at >= 0, `a delta from one.bin:\n${r.stdout}`)
  t.match(lines[at + 1], /^\s+seeds: one\.bin \d+\.\d%, two\.bin \d+\.\d%$/, 'the next line: one.bin, then two.bin; three.bin shares nothing')
  const j = JSON.parse((await runCli(['push', '--json', '-n', home, server.url], { env })).stdout)
  const e = j.events.find((x: { path: string }) => x.path === 'new.bin')
  t.same(e.candidates.map((c: { path: string }) => c.path), ['one.bin', 'two.bin'])
  t.ok(e.candidates[0].similarity > e.candidates[1].similarity, 'best first')
  t.equal(e.candidates[0].similarity, e.similarity, 'the first is the seed, at the similarity the rule used')
  t.notMatch((await runCli(['push', '-v', '-n', home, server.url], { env })).stdout, /seeds:/, '-v alone does not show them')
})
