/**
 * The two servers and clients of bench/sync.ts: a real `rsync --daemon` and `dsync serve`, each
 * a separate process on 127.0.0.1, and one-shot clients timed from spawn to exit.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, open, readdir, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { STATE_DIR_NAME } from '../../src/fs/index.js'
import { ensureCommands } from './debian-tools.js'
import { childPids, DSYNC_BIN, procCpu, resetPeakRss, watchTreeMemory } from './procs.js'

/**
 * One timed sync: bytes on the wire each way (client's view), wall time, CPU seconds and peak
 * RSS of the client command.
 */
export interface SyncRun {
  readonly sent: number
  readonly received: number
  readonly ms: number
  readonly cpuS: number
  readonly peakRss: number
  /** Empty when the command succeeded; else why not (exit code and stderr tail). */
  readonly error: string
  /** dsync's per-file actions (new, delta, whole, copy…) counted; empty for rsync. */
  readonly actions: Readonly<Record<string, number>>
}

interface Exit {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
  /** User + system CPU seconds of the command and whatever it forked and waited for. */
  readonly cpuS: number
  /** Its peak RSS, bytes (watchTreeMemory: polled, so a peak in its last 20 ms can be missed). */
  readonly peakRss: number
}

/**
 * Runs a command to its end. Its CPU time is this process's cutime + cstime after minus before:
 * Node reaps the child before 'close', and the kernel adds a child's times (with those of
 * the processes it reaped) to its parent's at that moment: exact to the clock tick, no polling.
 * Only one command runs at a time here, and the servers (also our children) are not reaped
 * while it runs, so nothing else lands in the difference.
 */
export function runCommand(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const cpu0 = procCpu('self').children
    const t0 = performance.now()
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env && { env }) })
    const memory = child.pid === undefined ? undefined : watchTreeMemory(child.pid)
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', (e) => {
      memory?.stop()
      reject(e)
    })
    child.on('close', (code) => {
      const ms = performance.now() - t0
      resolve({
        code,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
        ms,
        cpuS: procCpu('self').children - cpu0,
        peakRss: memory?.stop() ?? NaN,
      })
    })
  })
}

/** rsync is a dependency of the benchmark only; installed the Debian way when absent. */
export function ensureRsync(): void {
  if (!ensureCommands({ rsync: 'rsync' }).has('rsync')) throw new Error('rsync is missing and apt-get could not install it; the benchmark needs it')
}

/** A free loopback port (rsync --daemon cannot be told port 0 and report the port it took). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      s.close(() => resolve(port))
    })
  })
}

/** A long-running server process and how to stop it. */
export interface Daemon {
  readonly url: string
  readonly pid: number
  stop(): Promise<void>
}

/** What a server spent on one sync: CPU seconds and peak RSS (bytes) of its process tree. */
export interface ServerUse {
  readonly cpuS: number
  readonly peakRss: number
}

/**
 * Starts metering a server for one sync; `stop()` after the client has exited. CPU: the delta
 * of utime + stime + cutime + cstime of the server process. rsync's daemon forks a session
 * process per connection (which forks again: generator + receiver); their time reaches the
 * daemon's cutime/cstime only once reaped, so `stop()` first waits until the daemon has no
 * child left. Memory: the daemon's VmHWM is reset first (clear_refs), then watchTreeMemory
 * polls it and its forked session: for `dsync serve` (one process) the exact VmHWM of the run,
 * for rsync the daemon's few MiB plus the summed RSS of the session's processes.
 */
export function meterServer(d: Daemon): { stop(): Promise<ServerUse> } {
  const total = (): number => {
    const c = procCpu(d.pid)
    return c.self + c.children
  }
  const cpu0 = total()
  resetPeakRss(d.pid)
  const memory = watchTreeMemory(d.pid)
  return {
    async stop() {
      for (let i = 0; childPids(d.pid).length > 0; i++) {
        if (i === 500) throw new Error(`server ${d.pid} still has session processes 10 s after the client exited`)
        await new Promise((res) => setTimeout(res, 20))
      }
      return { cpuS: total() - cpu0, peakRss: memory.stop() }
    },
  }
}

function stopper(child: ChildProcess, signal: NodeJS.Signals): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const force = setTimeout(() => child.kill('SIGKILL'), 5000)
      child.once('exit', () => {
        clearTimeout(force)
        resolve()
      })
      child.kill(signal)
    })
}

/** Waits until `stream` has printed a line matching `re`, or fails when the process exits first. */
function waitFor(child: ChildProcess, stream: NodeJS.ReadableStream, re: RegExp, what: string): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let text = ''
    const onData = (b: Buffer): void => {
      text += b.toString()
      const m = re.exec(text)
      if (m) {
        stream.off('data', onData)
        child.off('exit', onExit)
        resolve(m)
      }
    }
    const onExit = (code: number | null): void => reject(new Error(`${what} exited (${code}) before it was ready: ${text.slice(-500)}`))
    stream.on('data', onData)
    child.once('exit', onExit)
  })
}

/**
 * `rsync --daemon --no-detach` with one writable module `bench` at `moduleDir`, on a free port.
 * As root, the daemon would switch to `nobody` by default; it runs as whoever runs the bench.
 */
export async function startRsyncDaemon(tmp: string, moduleDir: string): Promise<Daemon> {
  const port = await freePort()
  const conf = join(tmp, 'rsyncd.conf')
  const uid = process.getuid?.() ?? 0
  const gid = process.getgid?.() ?? 0
  await writeFile(
    conf,
    `use chroot = false\nuid = ${uid}\ngid = ${gid}\nlog file = ${join(tmp, 'rsyncd.log')}\npid file = ${join(tmp, 'rsyncd.pid')}\n` +
      `[bench]\npath = ${moduleDir}\nread only = false\n`,
  )
  const child = spawn('rsync', ['--daemon', '--no-detach', `--config=${conf}`, `--port=${port}`, '--address=127.0.0.1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const stop = stopper(child, 'SIGTERM')
  const url = `rsync://127.0.0.1:${port}/bench`
  // The daemon prints nothing when ready: poll with a module listing until it answers.
  for (let i = 0; ; i++) {
    const r = await runCommand('rsync', [`rsync://127.0.0.1:${port}/`])
    if (r.code === 0) break
    if (i === 50 || child.exitCode !== null) {
      await stop()
      throw new Error(`rsync --daemon did not start: ${r.stderr}`)
    }
    await new Promise((res) => setTimeout(res, 100))
  }
  return { url, pid: child.pid!, stop }
}

/** `dsync serve --port 0` as its own process; the port comes from its "serving … at ws://…" line. */
export async function startDsyncServer(root: string): Promise<Daemon> {
  const child = spawn(process.execPath, [DSYNC_BIN, 'serve', '--root', root, '--host', '127.0.0.1', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const stop = stopper(child, 'SIGINT')
  try {
    const m = await waitFor(child, child.stderr!, /at (ws:\/\/127\.0\.0\.1:\d+)/, 'dsync serve')
    // Keep draining the session log, or the server would block on a full pipe.
    child.stderr!.resume()
    return { url: m[1]!, pid: child.pid!, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

const rsyncTotal = (text: string, what: string): number => {
  const m = new RegExp(`Total bytes ${what}:\\s*([\\d,.]+)`).exec(text)
  return m ? Number(m[1]!.replace(/[,.]/g, '')) : NaN
}

/** `rsync FLAGS --delete --stats SRC/ URL/DEST/`; bytes from its own "Total bytes sent/received". */
export async function rsyncPush(flags: readonly string[], src: string, url: string): Promise<SyncRun> {
  const r = await runCommand('rsync', [...flags, '--delete', '--stats', `${src}/`, `${url}/`])
  return {
    sent: rsyncTotal(r.stdout, 'sent'),
    received: rsyncTotal(r.stdout, 'received'),
    ms: r.ms,
    cpuS: r.cpuS,
    peakRss: r.peakRss,
    error: r.code === 0 ? '' : `exit ${r.code}: ${r.stderr.slice(-300)}`,
    actions: {},
  }
}

/** The part of `dsync push --json` this bench reads. */
interface PushJson {
  summary: { wireBytesSent: number; wireBytesReceived: number }
  events: { action: string; path?: string; message?: string }[]
}

function isPushJson(x: unknown): x is PushJson {
  if (typeof x !== 'object' || x === null) return false
  const o = x as { summary?: unknown; events?: unknown }
  return typeof o.summary === 'object' && o.summary !== null && Array.isArray(o.events)
}

/** `node bin/dsync.js push SRC URL --delete --json [extra]`, timed as a whole process. */
export async function dsyncPush(src: string, url: string, extra: readonly string[] = []): Promise<SyncRun> {
  const r = await runCommand(process.execPath, [DSYNC_BIN, 'push', src, url, '--delete', '--json', ...extra])
  let parsed: unknown
  try {
    parsed = JSON.parse(r.stdout)
  } catch (err) {
    parsed = undefined
    if (r.code === 0) throw new Error(`dsync push --json printed no JSON: ${String(err)}: ${r.stdout.slice(0, 300)}`)
  }
  const actions: Record<string, number> = {}
  if (isPushJson(parsed)) for (const e of parsed.events) actions[e.action] = (actions[e.action] ?? 0) + 1
  // The exit message only counts failures; the first file's own message says what broke.
  const failed = isPushJson(parsed) ? parsed.events.find((e) => e.action === 'error') : undefined
  return {
    sent: isPushJson(parsed) ? parsed.summary.wireBytesSent : NaN,
    received: isPushJson(parsed) ? parsed.summary.wireBytesReceived : NaN,
    ms: r.ms,
    cpuS: r.cpuS,
    peakRss: r.peakRss,
    error: r.code === 0 ? '' : `exit ${r.code}: ${r.stderr.trim().slice(-300)}${failed ? ` (first: ${failed.path}: ${failed.message})` : ''}`,
    actions,
  }
}

/** A sync command under test and which of the two servers it talks to. */
export interface Tool {
  /** Directory-safe once \W runs are replaced; also the row label. */
  readonly id: string
  readonly server: 'rsync' | 'dsync'
  /** Bytes only: run once, time not reported (the jaccard / lcs "what would it send" reruns). */
  readonly bytesOnly: boolean
  push(src: string, url: string): Promise<SyncRun>
}

export const rsyncTool = (id: string, flags: readonly string[]): Tool => ({ id, server: 'rsync', bytesOnly: false, push: (src, url) => rsyncPush(flags, src, url) })
export const dsyncTool = (id: string, extra: readonly string[], bytesOnly: boolean): Tool => ({ id, server: 'dsync', bytesOnly, push: (src, url) => dsyncPush(src, url, extra) })

/** The two servers of a bench run and the folders they serve. */
export interface Servers {
  readonly rsync: Daemon
  readonly dsync: Daemon
  readonly rsyncRoot: string
  readonly dsyncRoot: string
}

/** Where `tool`'s receiver for `dir` is on disk and its URL. */
export function receiverOf(tool: Tool, servers: Servers, dir: string): { path: string; url: string } {
  return { path: join(tool.server === 'rsync' ? servers.rsyncRoot : servers.dsyncRoot, dir), url: `${servers[tool.server].url}/${dir}` }
}

/**
 * Makes `dst` hold exactly `src` (local `rsync -a --delete`, whole files, mtimes kept), leaving
 * dsync's own `.dsync` state folder of a sender alone, as a user's edits would.
 */
export async function materialize(src: string, dst: string): Promise<void> {
  const r = await runCommand('rsync', ['-a', '--delete', `--exclude=/${STATE_DIR_NAME}`, `${src}/`, `${dst}/`])
  if (r.code !== 0) throw new Error(`rsync ${src} → ${dst} failed: ${r.stderr}`)
}

/**
 * `cp -a src/. dst`: a copy with its own inodes, mtimes kept (how a user would seed a receiver
 * before a first sync), dsync's state folder included if `src` has one.
 */
export async function copyTree(src: string, dst: string): Promise<void> {
  await mkdir(dst, { recursive: true })
  const r = await runCommand('cp', ['-a', `${src}/.`, dst])
  if (r.code !== 0) throw new Error(`cp -a ${src} → ${dst} failed: ${r.stderr}`)
}

/** Whole directory trees, recursively, in `rm -rf` style. */
export async function removeTree(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

/**
 * Where two trees differ (first difference found), or '' when they hold the same directories
 * and files with the same bytes. The top-level `.dsync` state folder is dsync's, not the user's.
 * Both trees are listed first, then files are compared COMPARE_JOBS at a time: one file after
 * the other, a 100,000-file check took longer than the sync it checks.
 */
export async function treeDiff(a: string, b: string): Promise<string> {
  const [la, lb] = [await listTree(a), await listTree(b)]
  for (const [p, t] of la) if (lb.get(p) !== t) return `${p}: ${t} vs ${lb.get(p) ?? 'missing'}`
  for (const [p, t] of lb) if (!la.has(p)) return `${p}: missing vs ${t}`
  const files = [...la].filter(([, t]) => t === 'file').map(([p]) => p)
  let next = 0
  let found = ''
  const worker = async (): Promise<void> => {
    const bufs: [Buffer, Buffer] = [Buffer.alloc(COMPARE_BUFFER), Buffer.alloc(COMPARE_BUFFER)]
    while (found === '' && next < files.length) {
      const p = files[next++]!
      if (!(await sameBytes(join(a, p), join(b, p), bufs))) found ||= `${p}: content differs`
    }
  }
  await Promise.all(Array.from({ length: COMPARE_JOBS }, worker))
  return found
}

const COMPARE_BUFFER = 1 << 20
const COMPARE_JOBS = 8

/** Relative path → kind, for a whole tree except its top-level `.dsync`. */
async function listTree(root: string): Promise<Map<string, 'dir' | 'file' | 'other'>> {
  const out = new Map<string, 'dir' | 'file' | 'other'>()
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      if (rel === '' && e.name === STATE_DIR_NAME) continue
      const p = rel === '' ? e.name : `${rel}/${e.name}`
      const kind = e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other'
      out.set(p, kind)
      if (kind === 'dir') await walk(p)
    }
  }
  await walk('')
  return out
}

async function sameBytes(x: string, y: string, [bx, by]: readonly [Buffer, Buffer]): Promise<boolean> {
  const [fx, fy] = [await open(x), await open(y)]
  try {
    const [sx, sy] = [await fx.stat(), await fy.stat()]
    if (sx.size !== sy.size) return false
    for (let pos = 0; pos < sx.size; ) {
      const n = (await fx.read(bx, 0, bx.length, pos)).bytesRead
      const m = (await fy.read(by, 0, n, pos)).bytesRead
      if (n === 0 || m !== n || !bx.subarray(0, n).equals(by.subarray(0, n))) return false
      pos += n
    }
    return true
  } finally {
    await fx.close()
    await fy.close()
  }
}
