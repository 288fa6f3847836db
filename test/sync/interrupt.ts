import t from 'tap'
import { readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pull, push } from '../../src/sync/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, describeTree, startServer } from '../support/sync.js'
import { LOCAL_RSH, serveOver } from '../support/transports.js'

async function allFiles(root: string, rel = ''): Promise<string[]> {
  const out: string[] = []
  for (const d of await readdir(join(root, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${d.name}` : d.name
    if (d.name === '.dsync') continue
    if (d.isDirectory()) out.push(...(await allFiles(root, p)))
    else out.push(p)
  }
  return out
}

// Kill the connection at many points of a push: every file on the server is then its old or
// its new content (never a mix, never a temp file left), and a re-run finishes the job.
t.test('an interrupted push leaves old-or-new files only, and a re-run completes it', async (t) => {
  const old: Record<string, Uint8Array> = {}
  const next: Record<string, Uint8Array> = {}
  for (let i = 0; i < 4; i++) {
    old[`f${i}.bin`] = randomBytes(100 + i, 600_000)
    next[`f${i}.bin`] = i % 2 ? randomBytes(200 + i, 700_000) : Buffer.concat([randomBytes(300 + i, 1000), old[`f${i}.bin`]!.subarray(1000)])
  }
  for (const cutAfter of [1, 100_000, 500_000, 1_000_000]) {
    const home = await tempTree(t, old)
    const work = await tempTree(t)
    const server = await startServer(t, work)
    await push(home, server.url, clientOpts())
    for (const [p, c] of Object.entries(next)) await writeFile(join(home, p), c)
    const ac = new AbortController()
    let sent = 0
    await t.rejects(
      push(home, server.url, clientOpts({ signal: ac.signal, onBytes: (n) => (sent += n) >= cutAfter && ac.abort() })),
      { code: 'ABORTED' },
      `cut after ${cutAfter} bytes`,
    )
    await new Promise((r) => setTimeout(r, 200)) // let the server notice the close
    for (const p of Object.keys(old)) {
      const d = digestBytes(await readFile(join(work, p)))
      t.ok(d === digestBytes(old[p]!) || d === digestBytes(next[p]!), `${p} is old or new after a cut at ${cutAfter}`)
    }
    t.same((await allFiles(work)).sort(), Object.keys(old).sort(), 'no temp files left behind')
    await push(home, server.url, clientOpts())
    t.same(await describeTree(work), await describeTree(home), 're-run completes the job')
  }
})

// A file of 8 MiB or more changed in place goes direct (PROTOCOL.md §4.12): cut in its delta, the
// server keeps its old version whole (its temp file gone), and a re-run brings the new one.
t.test('an interrupted push of a large file changed in place (direct) leaves its old version, and a re-run completes it', async (t) => {
  const size = 9 * 1024 * 1024
  const before = randomBytes(900, size)
  const after = Buffer.from(before)
  for (let i = 0; i < 64; i++) after.set(randomBytes(901 + i, 512), Math.floor(((i + 0.5) * (size - 512)) / 64))
  for (const cutAfter of [1, 20_000]) {
    const home = await tempTree(t, { 'big.bin': before })
    const work = await tempTree(t)
    const server = await startServer(t, work)
    await push(home, server.url, clientOpts())
    await writeFile(join(home, 'big.bin'), after)
    const ac = new AbortController()
    let sent = 0
    await t.rejects(
      push(home, server.url, clientOpts({ signal: ac.signal, onBytes: (n) => (sent += n) >= cutAfter && ac.abort() })),
      { code: 'ABORTED' },
      `cut after ${cutAfter} bytes of its delta`,
    )
    await new Promise((r) => setTimeout(r, 200)) // let the server notice the close
    t.ok((await readFile(join(work, 'big.bin'))).equals(before), `its old version, whole, after a cut at ${cutAfter}`)
    t.same(await allFiles(work), ['big.bin'], 'no temp file left behind')
    const r = await push(home, server.url, clientOpts())
    t.ok((await readFile(join(work, 'big.bin'))).equals(after), 're-run: the new version')
    t.ok(r.summary.wireBytesSent + r.summary.wireBytesReceived < 400_000, `re-run as a delta (${r.summary.wireBytesSent + r.summary.wireBytesReceived} bytes)`)
  }
})

// The same from the receiving side: a pull whose client (the receiver) is stopped mid-transfer.
t.test('an interrupted pull leaves old-or-new files only in the local tree, and a re-run completes it', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const old: Record<string, Uint8Array> = {}
  for (let i = 0; i < 4; i++) old[`f${i}.bin`] = randomBytes(400 + i, 500_000)
  for (const [p, c] of Object.entries(old)) await writeFile(join(served, p), c)
  const local = await tempTree(t)
  await pull(server.url, local, clientOpts())
  const next: Record<string, Uint8Array> = {}
  for (let i = 0; i < 4; i++) next[`f${i}.bin`] = randomBytes(500 + i, 600_000)
  for (const [p, c] of Object.entries(next)) await writeFile(join(served, p), c)
  for (const stopAfter of [0, 1, 2]) {
    const ac = new AbortController()
    let settled = 0
    const run = pull(server.url, local, clientOpts({ signal: ac.signal, onEvent: () => ++settled > stopAfter && ac.abort() }))
    await run.catch(() => undefined) // stopped, or finished first when the files were already new
    for (const p of Object.keys(old)) {
      const d = digestBytes(await readFile(join(local, p)))
      t.ok(d === digestBytes(old[p]!) || d === digestBytes(next[p]!), `${p} is old or new after stopping at event ${stopAfter}`)
    }
    t.same((await allFiles(local)).sort(), Object.keys(old).sort(), 'no temp files left behind')
  }
  await pull(server.url, local, clientOpts())
  t.same(await describeTree(local), await describeTree(served), 're-run completes the job')
})

// The ssh transport: the remote command dies mid-session (the connection drops, or dsync is
// killed there). The client reports NETWORK; its own tree, when it is the receiver, holds old
// or new files only and no temp files; a re-run completes the job.
t.test('stdio: the remote dsync killed mid-pull: NETWORK, the local tree has no half-written files, a re-run completes', async (t) => {
  const served = await tempTree(t)
  const old: Record<string, Uint8Array> = {}
  for (let i = 0; i < 6; i++) old[`f${i}.bin`] = randomBytes(600 + i, 700_000)
  for (const [p, c] of Object.entries(old)) await writeFile(join(served, p), c)
  const target = await serveOver(t, 'stdio', served)
  const local = await tempTree(t)
  await pull(target.url, local, target.opts())
  const next: Record<string, Uint8Array> = {}
  for (let i = 0; i < 6; i++) next[`f${i}.bin`] = randomBytes(700 + i, 700_000)
  for (const [p, c] of Object.entries(next)) await writeFile(join(served, p), c)
  const pidfile = join(await tempTree(t), 'pid')
  let killed = false
  const killRemote = async (): Promise<void> => {
    if (killed) return
    killed = true
    process.kill(Number((await readFile(pidfile, 'utf8')).trim()), 'SIGKILL')
  }
  await t.rejects(
    pull(target.url, local, target.opts({ rsh: `${LOCAL_RSH} --pidfile '${pidfile}'`, onEvent: () => void killRemote() })),
    { code: 'NETWORK', message: /killed by SIGKILL/ },
  )
  for (const p of Object.keys(old)) {
    const d = digestBytes(await readFile(join(local, p)))
    t.ok(d === digestBytes(old[p]!) || d === digestBytes(next[p]!), `${p} is old or new`)
  }
  t.same((await allFiles(local)).sort(), Object.keys(old).sort(), 'no temp files left behind')
  await pull(target.url, local, target.opts())
  t.same(await describeTree(local), await describeTree(served), 're-run completes the job')
})

t.test('stdio: the remote dsync killed mid-push: NETWORK, the remote files are old or new, a re-run completes', async (t) => {
  const old: Record<string, Uint8Array> = {}
  const next: Record<string, Uint8Array> = {}
  for (let i = 0; i < 4; i++) {
    old[`f${i}.bin`] = randomBytes(800 + i, 600_000)
    next[`f${i}.bin`] = randomBytes(900 + i, 700_000)
  }
  const home = await tempTree(t, old)
  const work = await tempTree(t)
  const target = await serveOver(t, 'stdio', work)
  await push(home, target.url, target.opts())
  for (const [p, c] of Object.entries(next)) await writeFile(join(home, p), c)
  const pidfile = join(await tempTree(t), 'pid')
  let sent = 0
  await t.rejects(
    push(home, target.url, target.opts({
      rsh: `${LOCAL_RSH} --pidfile '${pidfile}'`,
      onBytes: (n) => {
        if (sent < 500_000 && (sent += n) >= 500_000) void readFile(pidfile, 'utf8').then((pid) => process.kill(Number(pid.trim()), 'SIGKILL'))
      },
    })),
    { code: 'NETWORK' },
  )
  for (const p of Object.keys(old)) {
    const d = digestBytes(await readFile(join(work, p)))
    t.ok(d === digestBytes(old[p]!) || d === digestBytes(next[p]!), `${p} is old or new (a killed receiver cannot clean up, but never leaves a half-written file)`)
  }
  await push(home, target.url, target.opts())
  t.same(await describeTree(work), await describeTree(home), 're-run completes the job')
})

t.test('stdio: Ctrl+C mid-push: ABORTED, and the remote dsync hears the close and removes its temp files', async (t) => {
  const old: Record<string, Uint8Array> = {}
  const next: Record<string, Uint8Array> = {}
  for (let i = 0; i < 4; i++) {
    old[`f${i}.bin`] = randomBytes(1000 + i, 600_000)
    next[`f${i}.bin`] = randomBytes(1100 + i, 700_000)
  }
  const home = await tempTree(t, old)
  const work = await tempTree(t)
  const target = await serveOver(t, 'stdio', work)
  await push(home, target.url, target.opts())
  for (const [p, c] of Object.entries(next)) await writeFile(join(home, p), c)
  const ac = new AbortController()
  let sent = 0
  await t.rejects(push(home, target.url, target.opts({ signal: ac.signal, onBytes: (n) => (sent += n) >= 500_000 && ac.abort() })), { code: 'ABORTED' })
  // push resolves only once the remote process has exited: its cleanup is done by now.
  for (const p of Object.keys(old)) {
    const d = digestBytes(await readFile(join(work, p)))
    t.ok(d === digestBytes(old[p]!) || d === digestBytes(next[p]!), `${p} is old or new`)
  }
  t.same((await allFiles(work)).sort(), Object.keys(old).sort(), 'no temp files left behind')
})
