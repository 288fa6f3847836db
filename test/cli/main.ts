import t from 'tap'
import { readdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { EXIT_CODES } from '../../src/cli/exit-codes.js'
import { DEFAULT_PORT, parseDsyncUrl } from '../../src/net/index.js'
import { runCli } from '../support/cli.js'
import { startServer, TOKEN } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const env = { DSYNC_TOKEN: TOKEN }

t.test('usage errors print in dsync\'s one style, "dsync: ...", and exit 2', async (t) => {
  const cases: [string[], RegExp][] = [
    [['push', '--frobnicate', 'a', 'ws://h'], /^dsync: unknown option '--frobnicate' \(see 'dsync push --help'\)\n$/],
    [['push', 'only-one-arg'], /^dsync: missing required argument 'url' \(see 'dsync push --help'\)\n$/],
    [['push', '--threshold', 'lots', 'a', 'ws://h'], /^dsync: option '--threshold <ratio>' argument 'lots' is invalid\. .*threshold/],
    [['no-such-command'], /^dsync: unknown command 'no-such-command' \(see 'dsync --help'\)\n$/],
    [['serve'], /^dsync: required option '--root <dir>' not specified/],
  ]
  for (const [argv, msg] of cases) {
    const r = await runCli(argv)
    t.equal(r.code, EXIT_CODES.USAGE, argv.join(' '))
    t.match(r.stderr, msg)
    t.notMatch(r.stderr, /^error:/m, 'not commander\'s own style')
    t.equal(r.stdout, '')
  }
  const help = await runCli(['push', '--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage: dsync push/)
})

t.test('with --json a failure prints a JSON error object on stdout (and the line on stderr)', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'x' })
  const r = await runCli(['push', '--json', home, 'ws://127.0.0.1:1'], { env })
  t.equal(r.code, 6)
  t.same(JSON.parse(r.stdout), { error: { code: 'NETWORK', message: r.stderr.replace(/^dsync: /, '').trimEnd(), exit: 6 } })
  const usage = await runCli(['pull', '--json', '--threshold', 'x', 'ws://h', home])
  t.equal(usage.code, 2)
  t.equal(JSON.parse(usage.stdout).error.code, 'USAGE')
  const sim = await runCli(['similarity', '--json', join(home, 'nope'), join(home, 'a.txt')])
  t.equal(JSON.parse(sim.stdout).error.exit, 3)
  const plain = await runCli(['push', home, 'ws://127.0.0.1:1'], { env })
  t.equal(plain.stdout, '', 'no JSON without --json')
})

t.test('with --json a partial sync prints one object: the result, carrying the error', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha', 'b.txt': 'beta' })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  t.equal((await runCli(['push', home, server.url], { env })).code, 0)
  await writeFile(join(work, 'a.txt'), 'changed on the server')
  const r = await runCli(['push', '--json', home, server.url], { env })
  t.equal(r.code, EXIT_CODES.PARTIAL, r.stderr)
  const lines = r.stdout.trimEnd().split('\n')
  t.equal(lines.length, 1, 'one JSON object')
  const j = JSON.parse(lines[0]!)
  t.equal(j.ok, false)
  t.match(j.error, { code: 'PARTIAL', exit: EXIT_CODES.PARTIAL, message: /1 kept as changed on the receiver/ })
  t.ok(j.events.some((e: { path: string; action: string }) => e.path === 'a.txt' && e.action === 'kept'))
})

t.test('a URL where the directory goes: "arguments swapped?" with the usage', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'x' })
  const push = await runCli(['push', 'ws://127.0.0.1:8730/x', home], { env })
  t.equal(push.code, 2)
  t.match(push.stderr, /arguments swapped\? usage: dsync push LOCAL_DIR URL/)
  const pull = await runCli(['pull', home, 'wss://host/x'], { env })
  t.equal(pull.code, 2)
  t.match(pull.stderr, /arguments swapped\? usage: dsync pull URL LOCAL_DIR/)
})

t.test('a URL without a port means serve\'s port, 8730, not 80', async (t) => {
  t.equal(DEFAULT_PORT, 8730)
  t.equal(parseDsyncUrl('ws://example.org/notes').wsUrl, 'ws://example.org:8730/')
  t.equal(parseDsyncUrl('wss://example.org').wsUrl, 'wss://example.org:8730/')
  t.equal(parseDsyncUrl('ws://example.org:80/').wsUrl, 'ws://example.org:80/', 'a port written out is kept')
})

t.test('pull -n into a missing directory shows the plan and creates nothing', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha', 'sub/b.txt': 'beta' })
  const server = await startServer(t, await tempTree(t))
  t.equal((await runCli(['push', home, server.url], { env })).code, 0)
  const parent = await tempTree(t)
  const dest = join(parent, 'mirror')
  const r = await runCli(['pull', '-n', '-v', server.url, dest], { env })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^new +a\.txt/m)
  t.match(r.stdout, /^new +sub\/b\.txt/m)
  t.match(r.stdout, /2 files transferred; .*\(dry run: nothing changed\)/)
  t.same(await readdir(parent), [], 'the directory was not created')
})

t.test('a dry run creates no state folder in the local tree', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha' })
  const server = await startServer(t, await tempTree(t))
  const r = await runCli(['push', '-n', home, server.url], { env })
  t.equal(r.code, 0, r.stderr)
  t.same(await readdir(home), ['a.txt'], 'no .dsync/ on a push dry run')
  const local = await tempTree(t)
  const p = await runCli(['pull', '-n', server.url, local], { env })
  t.equal(p.code, 0, p.stderr)
  t.same(await readdir(local), [], 'no .dsync/ on a pull dry run')
  const missing = await runCli(['push', '-n', join(home, 'nope'), server.url], { env })
  t.equal(missing.code, 3, 'a push still needs its directory')
  t.ok((await stat(home)).isDirectory())
})

t.test('a reader that goes away (dsync … | head) ends dsync quietly: no EPIPE stack trace', async (t) => {
  const { spawn } = await import('node:child_process')
  const { fileURLToPath } = await import('node:url')
  const bin = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))
  for (const argv of [['push', '--help'], ['--help']]) {
    const child = spawn(process.execPath, [bin, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] })
    // `head -1`: read the first chunk, then close the pipe while dsync may still be writing.
    child.stdout.once('data', () => child.stdout.destroy())
    let stderr = ''
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    t.equal(code, 0, `${argv.join(' ')}: exit 0`)
    t.notMatch(stderr, /EPIPE|Unhandled|at /, `${argv.join(' ')}: nothing on stderr but dsync's own words: ${JSON.stringify(stderr)}`)
  }
})
