import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runCli } from '../support/cli.js'
import { randomBytes } from '../support/random.js'
import { startServer, TOKEN } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

// A pull's receiver is the local side, which did not know the delta stats the sender computed:
// `pull --stats` and `--json` said matched 0 B and literal 0 B after deltas.
t.test('pull --json and --stats report the bytes matched from seeds and sent as literals', async (t) => {
  const env = { DSYNC_TOKEN: TOKEN }
  const v1 = randomBytes(42, 600 * 1024)
  const home = await tempTree(t, { 'big.bin': v1 })
  const server = await startServer(t, await tempTree(t))
  t.equal((await runCli(['push', home, server.url], { env })).code, 0)
  const local = join(await tempTree(t), 'copy')
  t.equal((await runCli(['pull', server.url, local], { env })).code, 0)
  // Change 4 KiB in the middle, on the server side (through a push from home).
  const v2 = Buffer.from(v1)
  v2.set(randomBytes(7, 4096), 300 * 1024)
  await writeFile(join(home, 'big.bin'), v2)
  t.equal((await runCli(['push', home, server.url], { env })).code, 0)
  const r = await runCli(['pull', '--json', server.url, local], { env })
  t.equal(r.code, 0, r.stderr)
  const j = JSON.parse(r.stdout)
  const ev = j.events.find((e: { path: string }) => e.path === 'big.bin')
  t.equal(ev.action, 'delta')
  t.ok(j.summary.matchedBytes >= 500 * 1024, `matched ${j.summary.matchedBytes}`)
  t.ok(j.summary.literalBytes >= 4096 && j.summary.literalBytes < 100 * 1024, `literal ${j.summary.literalBytes}`)
  t.equal(j.summary.matchedBytes + j.summary.literalBytes, v2.length, 'matched + literal = the file')
  t.equal(ev.copiedBytes + ev.literalBytes, v2.length)
  // And the text: one more change, pulled with --stats.
  v2.set(randomBytes(8, 4096), 100 * 1024)
  await writeFile(join(home, 'big.bin'), v2)
  t.equal((await runCli(['push', home, server.url], { env })).code, 0)
  const s = await runCli(['pull', '--stats', server.url, local], { env })
  t.equal(s.code, 0, s.stderr)
  t.notMatch(s.stdout, /^matched +0 B/m)
  t.match(s.stdout, /^matched +\d[\d.]* KiB/m)
})
