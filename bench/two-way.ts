/**
 * Issue 12: what a two-way round costs. Two machines, "home" (the client) and "work" (served),
 * start equal (a bench corpus of 400 text files and two binaries, ~16 MiB); each edits its own
 * files (edits, a rename or move, a new file, a deletion); then one tool makes them equal again:
 *
 * - `dsync sync home ws://work` — one command, both ways;
 * - `dsync push --delete` then `dsync pull --delete` — the two one-way runs it replaces;
 * - `rsync -au` both ways through a daemon — what people do by hand (no deletions either way);
 * - Unison 2.52 over a socket (`unison -socket`) — the two-way tool users know.
 *
 * Each method starts from fresh copies and its own unmeasured first sync (state on both sides),
 * then the edits, then the measured run(s). Median of 3; wall time, CPU of client and server,
 * bytes on the wire (dsync: its own count; rsync: its --stats; Unison: a counting relay), and
 * whether the trees end equal and every deletion was made on the other side.
 * `npm run bench -- two-way` (`--reps N`).
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createConnection, createServer } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { KiB, MiB, seededBytes } from './support/data.js'
import { flag, procCpu, DSYNC_BIN } from './support/procs.js'
import { seededText, textEdits } from './support/sync-data.js'
import { ensureCommands } from './support/debian-tools.js'
import { copyTree, ensureRsync, freePort, meterServer, runCommand, startDsyncServer, startRsyncDaemon, treeDiff } from './support/sync-tools.js'
import { printEnvironment, printTable } from './support/table.js'

const TEXT_FILES = 400

async function put(root: string, path: string, data: Uint8Array, mtimeS?: number): Promise<void> {
  const abs = join(root, path)
  await mkdir(dirname(abs), { recursive: true })
  await writeFile(abs, data)
  if (mtimeS !== undefined) {
    const { utimes } = await import('node:fs/promises')
    await utimes(abs, mtimeS, mtimeS)
  }
}

const textPath = (i: number): string => `docs/d${i % 10}/note-${String(i).padStart(3, '0')}.txt`

export async function makeBase(root: string): Promise<void> {
  for (let i = 0; i < TEXT_FILES; i++) await put(root, textPath(i), seededText(1000 + i, 20 * KiB), 1_700_000_000)
  await put(root, 'bin/a.bin', seededBytes(7001, 4 * MiB), 1_700_000_000)
  await put(root, 'bin/b.bin', seededBytes(7002, 4 * MiB), 1_700_000_000)
}

/** Home edits files 0, 10, 20…; work edits 5, 15, 25…: disjoint, so no conflict is expected. */
export async function editBoth(home: string, work: string): Promise<void> {
  for (const [root, first, seed] of [[home, 0, 2000], [work, 5, 3000]] as const) {
    for (let k = 0; k < 20; k++) {
      const i = first + 10 * k
      const p = join(root, textPath(i))
      await writeFile(p, textEdits(await readFile(p), seed + k, 3, 40))
    }
  }
  await rename(join(home, textPath(1)), join(home, 'docs/renamed-at-home.txt'))
  await put(home, 'docs/new-at-home.txt', seededText(4001, 30 * KiB))
  await rm(join(home, textPath(2)))
  await mkdir(join(work, 'archive'))
  await rename(join(work, textPath(6)), join(work, 'archive/moved-at-work.txt'))
  await put(work, 'docs/new-at-work.txt', seededText(4002, 30 * KiB))
  await rm(join(work, textPath(7)))
}

interface Outcome {
  readonly ms: number
  readonly clientCpuS: number
  readonly serverCpuS: number
  readonly bytes: number
  readonly equal: string
  readonly deletions: string
}

/** Both deletions made on the other side: home deleted note 2, work deleted note 7. */
async function deletionsMade(home: string, work: string): Promise<string> {
  const gone = async (root: string, i: number) => readFile(join(root, textPath(i))).then(() => false, () => true)
  return (await gone(work, 2)) && (await gone(home, 7)) ? 'yes' : 'no'
}

async function check(home: string, work: string): Promise<Pick<Outcome, 'equal' | 'deletions'>> {
  const diff = await treeDiff(home, work)
  return { equal: diff === '' ? 'yes' : `no (${diff.slice(0, 60)})`, deletions: await deletionsMade(home, work) }
}

const dsync = (args: readonly string[]) => runCommand(process.execPath, [DSYNC_BIN, ...args])

function wire(stdout: string): number {
  const j = JSON.parse(stdout) as { summary: { wireBytesSent: number; wireBytesReceived: number } }
  return j.summary.wireBytesSent + j.summary.wireBytesReceived
}

/** Runs `measured` against a served `work`, with `setup` first (unmeasured), the edits between. */
async function withDsyncServer(home: string, work: string, setup: (url: string) => Promise<void>, measured: (url: string) => Promise<{ ms: number; cpuS: number; bytes: number }>): Promise<Outcome> {
  const server = await startDsyncServer(work)
  try {
    await setup(server.url)
    await editBoth(home, work)
    const meter = meterServer(server)
    const r = await measured(server.url)
    const use = await meter.stop()
    return { ms: r.ms, clientCpuS: r.cpuS, serverCpuS: use.cpuS, bytes: r.bytes, ...(await check(home, work)) }
  } finally {
    await server.stop()
  }
}

async function okRun(args: readonly string[], okCodes: readonly number[] = [0]): Promise<{ ms: number; cpuS: number; bytes: number }> {
  const r = await dsync(args)
  if (!okCodes.includes(r.code ?? -1)) throw new Error(`dsync ${args[0]} failed (exit ${r.code}): ${r.stderr.slice(-300)}`)
  return { ms: r.ms, cpuS: r.cpuS, bytes: args.includes('--json') ? wire(r.stdout) : 0 }
}

const METHODS: Record<string, (home: string, work: string, tmp: string) => Promise<Outcome>> = {
  'dsync sync (two-way)': (home, work) =>
    withDsyncServer(home, work, async (url) => void (await okRun(['sync', home, url])), (url) => okRun(['sync', home, url, '--json'])),
  'dsync push + pull (one-way ×2)': (home, work) =>
    withDsyncServer(
      home,
      work,
      async (url) => {
        await okRun(['push', home, url])
        await okRun(['pull', url, home])
      },
      async (url) => {
        // The push keeps work's new file (never synced from home: exit 10, "kept"); the pull
        // then brings work's changes. Work's deletion is undone by the push (home still has it).
        const a = await okRun(['push', '--delete', home, url, '--json'], [0, 10])
        const b = await okRun(['pull', '--delete', url, home, '--json'], [0, 10])
        return { ms: a.ms + b.ms, cpuS: a.cpuS + b.cpuS, bytes: a.bytes + b.bytes }
      },
    ),
  'rsync -au both ways (daemon)': async (home, work, tmp) => {
    const daemon = await startRsyncDaemon(tmp, work)
    try {
      await editBoth(home, work)
      const meter = meterServer(daemon)
      const stats = (s: string, what: string) => Number(/Total bytes (\w+):\s*([\d,.]+)/g.exec(s) && new RegExp(`Total bytes ${what}:\\s*([\\d,.]+)`).exec(s)![1]!.replace(/[,.]/g, ''))
      const a = await runCommand('rsync', ['-au', '--stats', `${home}/`, `${daemon.url}/`])
      const b = await runCommand('rsync', ['-au', '--stats', `${daemon.url}/`, `${home}/`])
      const use = await meter.stop()
      if (a.code !== 0 || b.code !== 0) throw new Error(`rsync failed: ${a.stderr}${b.stderr}`)
      const bytes = stats(a.stdout, 'sent') + stats(a.stdout, 'received') + stats(b.stdout, 'sent') + stats(b.stdout, 'received')
      return { ms: a.ms + b.ms, clientCpuS: a.cpuS + b.cpuS, serverCpuS: use.cpuS, bytes, ...(await check(home, work)) }
    } finally {
      await daemon.stop()
    }
  },
  'unison -batch (socket)': (home, work, tmp) => unisonRound(home, work, tmp),
}

/** A TCP relay on 127.0.0.1 that counts the bytes it carries both ways. */
async function countingRelay(target: number): Promise<{ port: number; bytes(): number; close(): void }> {
  let bytes = 0
  const server = createServer((c) => {
    const up = createConnection(target, '127.0.0.1')
    c.on('data', (b: Buffer) => (bytes += b.length))
    up.on('data', (b: Buffer) => (bytes += b.length))
    c.pipe(up).pipe(c)
    c.on('error', () => up.destroy())
    up.on('error', () => c.destroy())
  })
  const port = await freePort()
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r))
  return { port, bytes: () => bytes, close: () => server.close() }
}

async function unisonRound(home: string, work: string, tmp: string): Promise<Outcome> {
  const env = { ...process.env, UNISON: join(tmp, 'unison-state') }
  await mkdir(env.UNISON, { recursive: true })
  const port = await freePort()
  const server = spawn('unison', ['-socket', String(port)], { stdio: 'ignore', env, cwd: tmp })
  try {
    await new Promise((r) => setTimeout(r, 500))
    const relay = await countingRelay(port)
    const args = (extra: string[] = []) => [home, `socket://127.0.0.1:${relay.port}/${work}`, '-batch', '-auto', '-silent', '-times', '-perms', '0', ...extra]
    const first = await runCommand('unison', args(), env)
    if (first.code !== 0) throw new Error(`unison failed (exit ${first.code}): ${first.stderr.slice(-300)}`)
    await editBoth(home, work)
    const b0 = relay.bytes()
    const cpu0 = procCpu(server.pid!)
    const r = await runCommand('unison', args(), env)
    const cpu1 = procCpu(server.pid!)
    relay.close()
    if (r.code !== 0) throw new Error(`unison failed (exit ${r.code}): ${r.stderr.slice(-300)}`)
    return { ms: r.ms, clientCpuS: r.cpuS, serverCpuS: cpu1.self + cpu1.children - cpu0.self - cpu0.children, bytes: relay.bytes() - b0, ...(await check(home, work)) }
  } finally {
    server.kill('SIGTERM')
  }
}

export async function run(): Promise<void> {
  printEnvironment()
  ensureRsync()
  const reps = Number(flag(process.argv, '--reps') ?? 3)
  const unison = ensureCommands({ unison: 'unison' }).has('unison')
  if (!unison) console.log('unison not found and not installed: its row is skipped')
  const tmp = await mkdtemp(join(tmpdir(), 'dsync-two-way-'))
  try {
    const base = join(tmp, 'base')
    await makeBase(base)
    const rows: (string | number)[][] = []
    let rsyncMs = NaN
    let rsyncBytes = NaN
    const outcomes: [string, Outcome][] = []
    for (const [name, method] of Object.entries(METHODS)) {
      if (name.startsWith('unison') && !unison) continue
      const runs: Outcome[] = []
      for (let i = 0; i < reps; i++) {
        const dir = join(tmp, `${name.replace(/\W+/g, '-')}-${i}`)
        const home = join(dir, 'home')
        const work = join(dir, 'work')
        await copyTree(base, home)
        await copyTree(base, work)
        runs.push(await method(home, work, dir))
        await rm(dir, { recursive: true, force: true })
      }
      runs.sort((a, b) => a.ms - b.ms)
      const med = runs[Math.floor(runs.length / 2)]!
      outcomes.push([name, med])
      if (name.startsWith('rsync')) {
        rsyncMs = med.ms
        rsyncBytes = med.bytes
      }
    }
    for (const [name, o] of outcomes) {
      rows.push([name, o.ms / 1000, o.clientCpuS, o.serverCpuS, o.bytes / KiB, (o.ms / rsyncMs).toFixed(2), (o.bytes / rsyncBytes).toFixed(3), o.equal, o.deletions])
    }
    printTable(
      `Two-way round, ${TEXT_FILES} × 20 KiB text + 2 × 4 MiB binary; 20 files edited on each side, a rename/move, a new file and a deletion each (median of ${reps}; load average ${loadavg()[0]!.toFixed(1)} at the end)`,
      ['method', 'wall s', 'client CPU s', 'server CPU s', 'wire KiB', 'wall ÷ rsync', 'bytes ÷ rsync', 'trees equal', 'both deletions made'],
      rows,
      2,
    )
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}
