import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseCompressLevel, parseRate, parseSeconds } from '../../src/cli/commands/sync-options.js'
import { runCli } from '../support/cli.js'
import { randomBytes } from '../support/random.js'
import { describeTree, startServer, TOKEN } from '../support/sync.js'
import { testServer } from '../support/net.js'
import { tempTree } from '../support/temp.js'

const env = { DSYNC_TOKEN: TOKEN }

t.test('-v itemizes what changed only; -vv lists unchanged files too (rsync itemize)', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha', 'b.txt': 'beta', 'c.txt': 'gamma' })
  const server = await startServer(t, await tempTree(t))
  t.equal((await runCli(['push', home, server.url], { env })).code, 0)
  await writeFile(join(home, 'b.txt'), 'beta, edited')
  const v = await runCli(['push', '-v', home, server.url], { env })
  t.equal(v.code, 0, v.stderr)
  t.match(v.stdout, /^(whole|delta|new) +b\.txt/m)
  t.notMatch(v.stdout, /unchanged/, '-v does not list unchanged files')
  const vv = await runCli(['push', '-vv', home, server.url], { env })
  t.equal(vv.code, 0, vv.stderr)
  t.match(vv.stdout, /^unchanged +a\.txt/m)
  t.match(vv.stdout, /^unchanged +b\.txt/m)
  t.match(vv.stdout, /^unchanged +c\.txt/m)
})

t.test('-q prints nothing on success, still the error on failure; -q with -v is a usage error', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha' })
  const server = await startServer(t, await tempTree(t))
  const q = await runCli(['push', '-q', home, server.url], { env })
  t.equal(q.code, 0, q.stderr)
  t.equal(q.stdout + q.stderr, '')
  const bad = await runCli(['push', '-q', home, 'ws://127.0.0.1:1'], { env })
  t.equal(bad.code, 6)
  t.equal(bad.stdout, '')
  t.match(bad.stderr, /^dsync: cannot connect/)
  const both = await runCli(['push', '-q', '-v', home, server.url], { env })
  t.equal(both.code, 2)
  t.match(both.stderr, /^dsync: .*--quiet.*cannot be used with.*--verbose/)
})

t.test('--include re-includes what an earlier --exclude skipped; --exclude-from reads rsync-style lines', async (t) => {
  const home = await tempTree(t, {
    'a.log': 'a', 'keep.log': 'k', 'notes.txt': 'n', 'tmp/x': 'x', 'build/out.o': 'o', 'build/keep.o': 'k',
  })
  const rules = join(home, '..', 'rules.txt')
  await writeFile(rules, '# comment\n; another comment\n\n- tmp/\nbuild/*\n+ build/keep.o\n')
  const work = await tempTree(t)
  const server = await startServer(t, work)
  const r = await runCli(['push', '--exclude', '*.log', '--include', 'keep.log', '--exclude-from', rules, home, server.url], { env })
  t.equal(r.code, 0, r.stderr)
  t.same(Object.keys(await describeTree(work)).sort(), ['build', 'build/keep.o', 'keep.log', 'notes.txt'])
  const work2 = await tempTree(t)
  const server2 = await startServer(t, work2)
  const order = await runCli(['push', '--include', 'notes.txt', '--exclude', '*.txt', home, server2.url], { env })
  t.equal(order.code, 0, order.stderr)
  t.notOk('notes.txt' in (await describeTree(work2)), 'the rule given last wins')
  const missing = await runCli(['push', '--exclude-from', join(home, 'nope'), home, server.url], { env })
  t.equal(missing.code, 3, 'a missing exclude file is NOT_FOUND')
  t.match(missing.stderr, /nope/)
})

t.test('--timeout: a server that goes silent ends the session with a network error (6)', async (t) => {
  let release = (): void => undefined
  const silent = new Promise<void>((resolve) => (release = resolve))
  const server = await testServer(t, () => silent)
  const home = await tempTree(t, { 'a.txt': 'alpha' })
  const started = Date.now()
  const r = await runCli(['push', '--timeout', '1', home, server.url])
  t.equal(r.code, 6, r.stderr)
  t.match(r.stderr, /no data moved either way for 1 s/)
  t.ok(Date.now() - started < 10_000, 'within a few seconds')
  release()
  t.equal(parseSeconds('0'), 0)
  t.throws(() => parseSeconds('1.5s'))
})

t.test('--bwlimit: KiB/s as in rsync; the file data takes as long as the rate says, both ways', async (t) => {
  t.equal(parseRate('100'), 100 * 1024)
  t.equal(parseRate('1.5M'), 1.5 * 1024 * 1024)
  t.equal(parseRate('2048b'), 2048)
  t.equal(parseRate('64KiB'), 64 * 1024)
  t.equal(parseRate('0'), 0)
  t.throws(() => parseRate('fast'))
  t.throws(() => parseRate('100b'), 'below 512 bytes/s')
  // 384 KiB of incompressible data at 128 KiB/s: the bucket holds one second, so >= ~2 s.
  const home = await tempTree(t, { 'a.bin': randomBytes(5, 192 * 1024), 'b.bin': randomBytes(6, 192 * 1024) })
  const server = await startServer(t, await tempTree(t))
  let started = Date.now()
  const push = await runCli(['push', '--bwlimit', '128', home, server.url], { env })
  t.equal(push.code, 0, push.stderr)
  t.ok(Date.now() - started >= 1800, `push took ${Date.now() - started} ms`)
  const dest = join(await tempTree(t), 'mirror')
  started = Date.now()
  const pull = await runCli(['pull', '--bwlimit', '128', server.url, dest], { env })
  t.equal(pull.code, 0, pull.stderr)
  t.ok(Date.now() - started >= 1800, `pull took ${Date.now() - started} ms`)
  t.same(await describeTree(dest), await describeTree(home))
})

t.test('--compress-level: the sender compresses at that level, pushing and pulling (the server sends a pull at the level asked)', async (t) => {
  t.equal(parseCompressLevel('6'), 6)
  for (const bad of ['0', '20', 'max', '2.5']) t.throws(() => parseCompressLevel(bad), `${bad} is refused`)
  // ~700 KB of source-like lines: zstd 9 packs them smaller than the default 3.
  let x = 7
  const rnd = (): number => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648
  const text = Array.from({ length: 9000 }, (_, i) => `  const v${i} = compute(${Math.floor(rnd() * 1e6)}, "${Math.floor(rnd() * 1e9).toString(36)}") // ${['alpha', 'beta', 'gamma'][i % 3]}`).join('\n')
  const home = await tempTree(t, { 'src.ts': text })
  const bytes = async (args: string[]): Promise<{ pushed: number; pulled: number }> => {
    const server = await startServer(t, await tempTree(t))
    const push = await runCli(['push', '--json', ...args, home, server.url], { env })
    t.equal(push.code, 0, push.stderr)
    const dest = join(await tempTree(t), 'mirror')
    const pull = await runCli(['pull', '--json', ...args, server.url, dest], { env })
    t.equal(pull.code, 0, pull.stderr)
    t.same(await describeTree(dest), await describeTree(home))
    const pushed = JSON.parse(push.stdout.trim().split('\n').pop()!).summary.wireBytesSent as number
    const pulled = JSON.parse(pull.stdout.trim().split('\n').pop()!).summary.wireBytesReceived as number
    return { pushed, pulled }
  }
  const plain = await bytes([])
  const packed = await bytes(['--compress-level', '9'])
  t.ok(packed.pushed < plain.pushed * 0.97, `pushed at level 9: ${packed.pushed} bytes, at 3: ${plain.pushed}`)
  t.ok(packed.pulled < plain.pulled * 0.97, `pulled at level 9: ${packed.pulled} bytes, at 3: ${plain.pulled}`)
})
