import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { main } from '../../src/cli/main.js'
import { connect } from '../../src/net/index.js'
import { OPTIONS, silentPeer, testServer, until } from '../support/net.js'
import { serve } from '../../src/sync/index.js'
import { runCli } from '../support/cli.js'
import { describeTree, TOKEN } from '../support/sync.js'
import { tempTree } from '../support/temp.js'
import { selfSignedCert } from '../support/tls.js'

/** Runs `dsync serve …` in-process until the test ends; resolves with the URL it logs. */
async function serveCli(t: Parameters<typeof tempTree>[0], argv: string[], env: Record<string, string> = {}) {
  const ac = new AbortController()
  let log = ''
  let announce: (url: string) => void = () => undefined
  const url = new Promise<string>((r) => (announce = r))
  const done = main(['serve', '--port', '0', ...argv], {
    stdout: { write: () => true },
    stderr: {
      write: (s: string) => {
        log += s
        const m = /at (wss?:\/\/\S+);/.exec(s)
        if (m) announce(m[1]!)
        return true
      },
    },
    env,
    cwd: process.cwd(),
    signal: ac.signal,
  })
  t.teardown(async () => {
    ac.abort()
    await done
  })
  return { url: await Promise.race([url, done.then((code) => Promise.reject(new Error(`serve exited ${code}: ${log}`)))]), log: () => log }
}

t.test('serve --tls-cert/--tls-key serves wss://, and push --ca trusts it', async (t) => {
  const dir = await tempTree(t)
  const { certPath: cert, keyPath: key } = await selfSignedCert(dir)
  const tokenFile = join(dir, 'token')
  await writeFile(tokenFile, `${TOKEN}\n`)
  const work = await tempTree(t)
  const home = await tempTree(t, { 'secret.txt': 'over TLS only\n' })
  const server = await serveCli(t, ['--root', work, '--token-file', tokenFile, '--tls-cert', cert, '--tls-key', key])
  t.match(server.url, /^wss:\/\//)
  const untrusted = await runCli(['push', home, server.url, '--token-file', tokenFile])
  t.equal(untrusted.code, 6, 'a certificate nobody vouched for is refused')
  const r = await runCli(['push', home, server.url, '--token-file', tokenFile, '--ca', cert])
  t.equal(r.code, 0, r.stderr)
  t.same(await describeTree(work), await describeTree(home))
  t.match(server.log(), /push \/: 1 files, 1 transferred/, 'one log line per session')
})

t.test('serve refuses a non-loopback host without a token, and half a TLS pair', async (t) => {
  const root = await tempTree(t)
  const open = await runCli(['serve', '--root', root, '--host', '0.0.0.0', '--port', '0'])
  t.equal(open.code, 2)
  t.match(open.stderr, /token/)
  const half = await runCli(['serve', '--root', root, '--tls-cert', 'x.pem', '--port', '0'], { env: { DSYNC_TOKEN: TOKEN } })
  t.equal(half.code, 2)
  t.match(half.stderr, /--tls-cert and --tls-key go together/)
  const missing = await runCli(['serve', '--root', join(root, 'nope'), '--port', '0'])
  t.equal(missing.code, 3)
  t.match(missing.stderr, /nope/)
})

t.test('serve --help lists the caps with their defaults; a cap that is not a count is a usage error', async (t) => {
  const help = await runCli(['serve', '--help'])
  t.match(help.stdout, /--max-connections <n>[\s\S]*\(default: 64\)/)
  t.match(help.stdout, /--max-connections-per-host <n>[\s\S]*\(default: 8\)/)
  t.match(help.stdout, /--max-sessions <n>[\s\S]*\(default: 64\)/)
  const root = await tempTree(t)
  for (const bad of ['0', '-1', 'lots', '1.5']) {
    const r = await runCli(['serve', '--root', root, '--port', '0', '--max-sessions', bad])
    t.equal(r.code, 2, `--max-sessions ${bad}`)
    t.match(r.stderr, /is not a count/)
  }
})

t.test('push to a server at its session cap prints why and exits 11 (BUSY)', async (t) => {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const server = await testServer(t, async () => held, { maxSessions: 1 })
  t.teardown(() => release())
  const first = await connect(server.url, { token: null, role: 'push', options: OPTIONS })
  t.teardown(() => first.channel.close())
  await until(() => server.activeSessions === 1, 2000, 'the first session')
  const home = await tempTree(t, { 'a.txt': 'a\n' })
  const r = await runCli(['push', home, server.url])
  t.equal(r.code, 11, r.stderr)
  t.match(r.stderr, /the server is busy: 1 sessions are open, the most it allows; try again later/)
})

t.test('serve --max-sessions and --max-connections reach the server', async (t) => {
  const root = await tempTree(t)
  const env = { DSYNC_TOKEN: TOKEN }
  const server = await serveCli(t, ['--root', root, '--max-sessions', '1', '--max-connections', '1'], env)
  const held = await connect(server.url, { token: TOKEN, role: 'push', options: OPTIONS })
  t.teardown(() => held.channel.close())
  const home = await tempTree(t, { 'a.txt': 'a\n' })
  const r = await runCli(['push', home, server.url], { env })
  t.equal(r.code, 11, r.stderr)
  t.match(r.stderr, /1 sessions are open/)
  // The refused connection holds its slot until its socket has closed.
  await new Promise((resolve) => setTimeout(resolve, 300))
  await silentPeer(t, server.url, 'upgrade')
  const r2 = await runCli(['push', home, server.url], { env })
  t.equal(r2.code, 11, r2.stderr)
  t.match(r2.stderr, /1 connections are waiting to authenticate/)
})

t.test('sessions waiting for the tree are capped: one more is told BUSY', async (t) => {
  const root = await tempTree(t)
  const ac = new AbortController()
  const server = await serve({ root, host: '127.0.0.1', port: 0, token: null, log: () => {}, signal: ac.signal, maxWaitingPerTree: 1 })
  const running = await connect(server.url, { token: null, role: 'push', options: OPTIONS })
  const waiting = await connect(server.url, { token: null, role: 'push', options: OPTIONS })
  await new Promise((resolve) => setTimeout(resolve, 300))
  const home = await tempTree(t, { 'a.txt': 'a\n' })
  const r = await runCli(['push', home, server.url])
  t.equal(r.code, 11, r.stderr)
  t.match(r.stderr, /1 sessions are already waiting for this tree; try again later/)
  running.channel.close()
  waiting.channel.close()
  ac.abort()
  await server.close()
})
