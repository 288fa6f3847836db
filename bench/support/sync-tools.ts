/**
 * The two servers and clients of bench/sync.ts: a real `rsync --daemon` and `dsync serve`, each
 * a separate process on 127.0.0.1, and one-shot clients timed from spawn to exit.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { open, readdir, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const DSYNC_BIN = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))

/** One timed sync: bytes on the wire each way (client's view) and wall time of the command. */
export interface SyncRun {
  readonly sent: number
  readonly received: number
  readonly ms: number
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
}

function runCommand(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env && { env }) })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', reject)
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), ms: performance.now() - t0 }),
    )
  })
}

/** rsync is a dependency of the benchmark only; install it the Debian way when absent. */
export function ensureRsync(): void {
  try {
    execFileSync('which', ['rsync'], { stdio: 'ignore' })
  } catch {
    // `which` exits 1 when rsync is missing: that is the case we handle by installing it.
    console.log('rsync not found: apt-get update && apt-get install -y rsync')
    execFileSync('sh', ['-c', 'apt-get update && apt-get install -y rsync'], { stdio: 'inherit' })
  }
}

/** A free loopback port (rsync --daemon cannot be told port 0 and report the port it took). */
function freePort(): Promise<number> {
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
  stop(): Promise<void>
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
  return { url, stop }
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
    return { url: m[1]!, stop }
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
    error: r.code === 0 ? '' : `exit ${r.code}: ${r.stderr.trim().slice(-300)}${failed ? ` (first: ${failed.path}: ${failed.message})` : ''}`,
    actions,
  }
}

/**
 * Makes `dst` hold exactly `src` (local `rsync -a --delete`, whole files, mtimes kept), leaving
 * dsync's own `.dsync` state folder of a sender alone, as a user's edits would.
 */
export async function materialize(src: string, dst: string): Promise<void> {
  const r = await runCommand('rsync', ['-a', '--delete', '--exclude=/.dsync', `${src}/`, `${dst}/`])
  if (r.code !== 0) throw new Error(`rsync ${src} → ${dst} failed: ${r.stderr}`)
}

/** Whole directory trees, recursively, in `rm -rf` style. */
export async function removeTree(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

/**
 * Where two trees differ (first difference), or '' when they hold the same directories and
 * files with the same bytes. The top-level `.dsync` state folder is dsync's, not the user's.
 */
export async function treeDiff(a: string, b: string): Promise<string> {
  // Two read buffers for the whole walk: allocating 2 MiB per file pair made checking the
  // 20,000-file tree take minutes.
  return diffDir(a, b, '', [Buffer.alloc(COMPARE_BUFFER), Buffer.alloc(COMPARE_BUFFER)])
}

const COMPARE_BUFFER = 1 << 20

async function diffDir(a: string, b: string, rel: string, bufs: readonly [Buffer, Buffer]): Promise<string> {
  const list = async (d: string): Promise<Map<string, 'dir' | 'file' | 'other'>> => {
    const entries = await readdir(join(d, rel), { withFileTypes: true })
    return new Map(
      entries
        .filter((e) => !(rel === '' && e.name === '.dsync'))
        .map((e) => [e.name, e.isDirectory() ? 'dir' : e.isFile() ? 'file' : 'other'] as const),
    )
  }
  const [la, lb] = [await list(a), await list(b)]
  for (const name of new Set([...la.keys(), ...lb.keys()])) {
    const p = rel === '' ? name : `${rel}/${name}`
    const [ta, tb] = [la.get(name), lb.get(name)]
    if (ta !== tb) return `${p}: ${ta ?? 'missing'} vs ${tb ?? 'missing'}`
    if (ta === 'dir') {
      const d = await diffDir(a, b, p, bufs)
      if (d !== '') return d
    } else if (ta === 'file' && !(await sameBytes(join(a, p), join(b, p), bufs))) return `${p}: content differs`
  }
  return ''
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
