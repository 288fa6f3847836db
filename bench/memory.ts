/**
 * Peak memory of real dsync processes (issue 7: goal < 150 MiB each, whatever the file size and
 * whatever a peer sends). Cases: push of a new file of `--size` (default 4 GiB) to a `dsync
 * serve`, pull of it back into an empty directory, and `--seconds` (default 10) of a hostile
 * client sending one file's chunk list as endless `more: true` pieces. Peak RSS is the larger
 * of the polled VmRSS and the kernel's VmHWM (/proc/PID/status); a new server per case.
 * The data is seeded: a 64 MiB random block repeated, a counter stamped every 4 KiB so no chunk
 * repeats (no dedup, no local copies). Its files are removed at the end.
 *
 *   npm run bench -- memory [--size 4g] [--seconds 10] [--endless-only]
 */
import { mkdtemp, open, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, LIMITS, type Message } from '../src/net/index.js'
import { fingerprintFromBytes } from '../src/hash/index.js'
import type { Chunk } from '../src/types.js'
import { seededBytes, MiB } from './support/data.js'
import { flag, parseSize, spawnDsync, spawnServer, watchMemory } from './support/procs.js'
import { mib, printEnvironment, printTable, type Cell } from './support/table.js'

const BLOCK = 64 * MiB

async function writeSeededFile(path: string, size: number): Promise<void> {
  const base = seededBytes(4242, BLOCK)
  const buf = Buffer.alloc(BLOCK)
  const fh = await open(path, 'w')
  try {
    for (let pos = 0, rep = 1; pos < size; pos += BLOCK, rep++) {
      buf.set(base)
      for (let o = 0; o < BLOCK; o += 4096) buf.writeUInt32LE(rep, o)
      const n = Math.min(BLOCK, size - pos)
      await fh.write(buf, 0, n, pos)
    }
  } finally {
    await fh.close()
  }
}

const OFF = { DSYNC_TOKEN: '' }

async function transfer(kind: 'push' | 'pull', serverRoot: string, localDir: string, size: number): Promise<Cell[][]> {
  const server = await spawnServer(serverRoot)
  const serverMem = watchMemory(server.child.pid!)
  const started = Date.now()
  const args = kind === 'push' ? ['push', localDir, server.url] : ['pull', server.url, localDir]
  const client = spawnDsync(args, OFF)
  const clientMem = watchMemory(client.child.pid!)
  const code = await client.exited
  const wall = (Date.now() - started) / 1000
  const clientPeak = clientMem.stop()
  const serverPeak = serverMem.stop()
  server.child.kill('SIGINT')
  await server.exited
  const target = join(kind === 'push' ? serverRoot : localDir, 'big.bin')
  const arrived = await stat(target).then((s) => s.size, () => -1)
  const note = code === 0 && arrived === size ? 'ok' : `exit ${code}, ${arrived} bytes arrived: ${client.output.stderr.trim().slice(0, 200)}`
  const rate = size / 1e6 / wall
  return [
    [`${kind} new ${mib(size)} MiB file`, kind === 'push' ? 'server (receiver)' : 'server (sender)', mib(serverPeak), wall, rate, note],
    [`${kind} new ${mib(size)} MiB file`, kind === 'push' ? 'client (sender)' : 'client (receiver)', mib(clientPeak), wall, rate, note],
  ]
}

/** A hostile pusher that sends endless chunk lists for `seconds`, reconnecting when refused. */
async function endlessStream(seconds: number): Promise<Cell[][]> {
  const root = await mkdtemp(join(tmpdir(), 'dsync-bench-endless-'))
  const server = await spawnServer(root)
  const mem = watchMemory(server.child.pid!)
  const started = Date.now()
  const fps = seededBytes(5, 16 * 64)
  let sent = 0
  let sessions = 0
  /** how the server ended each hostile session: error code → count */
  const endings = new Map<string, number>()
  const options = { dryRun: false, delete: false, checksum: false, threshold: 0.5, metric: 'dice', force: false, exclude: [] }
  while (Date.now() - started < seconds * 1000) {
    sessions++
    const { channel } = await connect(server.url, { token: null, role: 'push', options })
    let ended = false
    let wanted: (id: number) => void = () => undefined
    const want = new Promise<number>((r) => (wanted = r))
    const reader = (async () => {
      try {
        for await (const m of channel.messages()) if (m.t === 'want') wanted(m.id)
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'unknown'
        endings.set(code, (endings.get(code) ?? 0) + 1)
      }
      ended = true
      wanted(-1)
    })()
    await channel.send({ t: 'files', entries: [{ path: 'endless.bin', kind: 'file', size: 1024 * 1024, mtimeMs: 1_700_000_000_000, mode: 0o644 }] })
    await channel.send({ t: 'filesEnd' })
    const id = await want
    let offset = 0
    while (!ended && id >= 0 && Date.now() - started < seconds * 1000) {
      const chunks: Chunk[] = []
      for (let i = 0; i < LIMITS.maxChunksPerMessage; i++) {
        chunks.push({ offset, length: 1, fp: fingerprintFromBytes(fps, (i % 64) * 16) })
        offset++
      }
      const msg: Message = { t: 'chunks', id, size: 1024 * 1024, chunks, more: true }
      try {
        await channel.send(msg)
      } catch {
        break
      }
    }
    sent += channel.stats.bytesSent
    channel.close()
    await reader
  }
  const wall = (Date.now() - started) / 1000
  await new Promise((r) => setTimeout(r, 1000))
  const peak = mem.stop()
  server.child.kill('SIGINT')
  await server.exited
  await rm(root, { recursive: true, force: true })
  const said = server.output.stderr.split('\n').filter((l) => /BAD_MESSAGE|NETWORK|refused|error/i.test(l)).slice(0, 3)
  console.log(`endless stream: the server said: ${said.length > 0 ? said.join(' | ') : '(nothing about the hostile sessions)'}`)
  return [[`endless chunk stream ${seconds} s`, 'server (receiver)', mib(peak), wall, sent / 1e6 / wall, `${sessions} sessions, ended by the server: ${[...endings].map(([c, n]) => `${n} ${c}`).join(', ') || 'none'}; ${mib(sent)} MiB sent`]]
}

export async function run(): Promise<void> {
  const argv = process.argv.slice(2)
  const size = parseSize(flag(argv, 'size') ?? '4g')
  if (argv.includes('--endless-only')) {
    printTable('server memory under an endless chunk stream', ['case', 'side', 'peak RSS MiB', 'wall s', 'MB/s', 'note'], await endlessStream(Number(flag(argv, 'seconds') ?? 10)))
    return
  }
  const seconds = Number(flag(argv, 'seconds') ?? 10)
  printEnvironment()
  const rows: Cell[][] = []
  rows.push(...(await endlessStream(seconds)))
  const dir = await mkdtemp(join(tmpdir(), 'dsync-bench-memory-'))
  try {
    const home = join(dir, 'home')
    const { mkdir } = await import('node:fs/promises')
    await mkdir(home)
    const t0 = Date.now()
    await writeSeededFile(join(home, 'big.bin'), size)
    console.log(`wrote ${mib(size)} MiB of seeded data in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    const work = join(dir, 'work')
    await mkdir(work)
    rows.push(...(await transfer('push', work, home, size)))
    await rm(work, { recursive: true, force: true })
    const pulled = join(dir, 'pulled')
    rows.push(...(await transfer('pull', home, pulled, size)))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  printTable('peak memory of dsync processes (goal < 150 MiB each)', ['case', 'side', 'peak RSS MiB', 'wall s', 'MB/s', 'note'], rows)
}
