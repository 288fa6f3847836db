import t from 'tap'
import { join } from 'node:path'
import { rm, writeFile } from 'node:fs/promises'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { runCli } from '../support/cli.js'
import { startServer, TOKEN } from '../support/sync.js'
import { LOCAL_RSH, REMOTE_DSYNC, runDsync } from '../support/transports.js'

const SSH = ['-e', LOCAL_RSH, '--remote-dsync', REMOTE_DSYNC]

/** B: A with 100 bytes replaced in every 1000 (90% kept, no whole 8 KiB chunk left). */
function scattered(a: Uint8Array, seed: number): Uint8Array {
  const parts: Uint8Array[] = []
  for (let p = 0; p < a.length; p += 1000) parts.push(a.subarray(p, p + 900), randomBytes(seed + p, 100))
  return Buffer.concat(parts)
}

t.test('similar: finds the edited copy and the half copy, best first, not the unrelated files', async (t) => {
  const a = randomBytes(1, 120_000)
  const files: Record<string, Uint8Array> = {
    'docs/a.bin': a,
    'elsewhere/edited.bin': scattered(a, 7),
    'half.bin': Buffer.concat([a.subarray(0, 60_000), randomBytes(3, 60_000)]),
  }
  for (let i = 0; i < 20; i++) files[`noise/${i}.bin`] = randomBytes(100 + i, 30_000)
  const dir = await tempTree(t, files)
  const r = await runCli(['similar', '--json', join(dir, 'docs/a.bin'), dir])
  t.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  t.same(j.results.map((x: { path: string }) => x.path), ['elsewhere/edited.bin', 'half.bin'])
  t.ok(Math.abs(j.results[0].dice - 0.9) < 0.05, `edited: dice ${j.results[0].dice}`)
  t.ok(Math.abs(j.results[1].containedIn - 0.5) < 0.06, `half: ${j.results[1].containedIn} of it is in a`)
  t.equal(j.index.files, 23)
  t.equal(j.index.filesRead, 23)

  // Second run: the quick check reads nothing; a changed file is read again; a deleted one goes.
  await writeFile(join(dir, 'half.bin'), randomBytes(4, 50_000))
  await rm(join(dir, 'elsewhere/edited.bin'))
  const r2 = await runCli(['similar', '--json', '--threshold', '10%', join(dir, 'docs/a.bin')])
  t.equal(r2.code, 0, r2.stderr)
  const j2 = JSON.parse(r2.stdout)
  t.equal(j2.root, dir, 'default tree: the nearest folder with .dsync/')
  t.equal(j2.index.filesRead, 1)
  t.equal(j2.index.removed, 1)
  t.same(j2.results, [])

  const text = await runCli(['similar', '--top', '1', join(dir, 'docs/a.bin'), dir])
  t.match(text.stdout, /similar to .*a\.bin/)
  t.match(text.stdout, /no similar file/)
})

t.test('similar: --metric containment ranks by how much of FILE the other holds; --top cuts', async (t) => {
  const a = randomBytes(11, 100_000)
  const dir = await tempTree(t, {
    'part.bin': a.subarray(0, 40_000),
    'whole-plus.bin': Buffer.concat([a, randomBytes(12, 300_000)]),
    'q/a.bin': a,
  })
  const r = await runCli(['similar', '--json', '--metric', 'containment', join(dir, 'q/a.bin'), dir])
  const j = JSON.parse(r.stdout)
  t.same(j.results.map((x: { path: string }) => x.path), ['whole-plus.bin', 'part.bin'])
  t.ok(j.results[0].containment > 0.95 && j.results[0].dice < 0.5)
  const top = JSON.parse((await runCli(['similar', '--json', '--top', '1', '--metric', 'containment', join(dir, 'q/a.bin'), dir])).stdout)
  t.equal(top.results.length, 1)
})

t.test('similar: bad input is one line with its exit code', async (t) => {
  const dir = await tempTree(t, { a: 'x'.repeat(100) })
  const cases: [string[], number, RegExp][] = [
    [['similar', join(dir, 'missing')], 3, /no such file/],
    [['similar', join(dir, 'a'), join(dir, 'a')], 3, /not a directory/],
    [['similar', '--top', '0', join(dir, 'a')], 2, /not a count/],
    [['similar', '--metric', 'cosine', join(dir, 'a')], 2, /unknown metric/],
  ]
  for (const [argv, code, msg] of cases) {
    const r = await runCli(argv)
    t.equal(r.code, code, argv.join(' '))
    t.match(r.stderr, msg)
  }
})

t.test('similar and groups on a served tree: ws:// with a token file, ssh:// through -e; the same answers as locally', async (t) => {
  const a = randomBytes(21, 120_000)
  const files: Record<string, Uint8Array> = {
    'docs/a.bin': a,
    'docs/edited.bin': scattered(a, 22),
    'other/c.bin': randomBytes(23, 50_000),
    'other/c-copy.bin': Buffer.concat([randomBytes(23, 50_000), randomBytes(24, 1_000)]),
  }
  const root = await tempTree(t, files)
  const here = await tempTree(t, { 'q.bin': scattered(a, 25) })
  const server = await startServer(t, root)
  const tokenFile = join(here, 'token')
  await writeFile(tokenFile, TOKEN + '\n')
  const q = join(here, 'q.bin')

  const local = JSON.parse((await runCli(['similar', '--json', q, root])).stdout)
  const ws = await runCli(['similar', '--json', '--token-file', tokenFile, q, server.url])
  t.equal(ws.code, 0, ws.stderr)
  const served = JSON.parse(ws.stdout)
  t.equal(served.url, server.url)
  t.same(served.results, local.results, 'the served index answers as the local one')
  t.same(served.results.map((r: { path: string }) => r.path), ['docs/a.bin', 'docs/edited.bin'])
  const text = await runCli(['similar', '--token-file', tokenFile, q, `${server.url}/docs`])
  t.match(text.stdout, new RegExp(`similar to .*q\\.bin in ${server.url}/docs`))
  t.match(text.stdout, /^\s+\d+\.\d%.*\ba\.bin\b/m)

  const ssh = await runDsync(['groups', '--json', `ssh://localhost${root}`, ...SSH])
  t.equal(ssh.code, 0, ssh.stderr)
  const groups = JSON.parse(ssh.stdout).groups.map((g: { files: { path: string }[] }) => g.files.map((f) => f.path).sort())
  t.same(groups, [['docs/a.bin', 'docs/edited.bin'], ['other/c-copy.bin', 'other/c.bin']])
  const gtext = await runCli(['groups', '--token-file', tokenFile, server.url])
  t.match(gtext.stdout, /^R 100\.0%  (docs\/a\.bin|docs\/edited\.bin)/m)

  // Errors: no token (exit 7), token options on ssh (2), --top over the cap (2).
  const noToken = await runCli(['groups', server.url])
  t.equal(noToken.code, 7)
  t.match(noToken.stderr, /requires a token; pass --token-file/)
  const mixed = await runCli(['groups', '--token-file', tokenFile, `ssh://localhost${root}`])
  t.equal(mixed.code, 2)
  t.match(mixed.stderr, /ssh authenticates this transport/)
  const top = await runCli(['similar', '--top', '1000', q, server.url])
  t.equal(top.code, 2)
  t.match(top.stderr, /from 1 to 256/)
})
