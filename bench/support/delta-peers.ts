/**
 * The delta tools bench/delta.ts compares dsync with: rdiff (librsync), rsync over a daemon on
 * 127.0.0.1, xdelta3 and zstd --patch-from. Each run reports what it would put on the wire
 * (signature bytes from the seed side, delta bytes from the target side) and rebuilds the target
 * at `out`, so the caller can check it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { copyFile, mkdir, open, readFile, stat, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { join } from 'node:path'
import { ensureCommands } from './debian-tools.js'

/** The peer tools and the Debian packages that hold them. */
export const PEER_TOOLS = Object.freeze(['rdiff', 'rsync', 'xdelta3', 'zstd'])

/** zstd level and window for --patch-from. Level 9: here -19 took 24–45 s per 20 MiB target
 *  (too slow for a 10-minute run) for 9–22% smaller deltas on text (20 MiB log + 1 MiB: -3
 *  236 KiB, -9 195 KiB, -19 178 KiB); on binary edits all levels are within 12%. --long=27
 *  (128 MiB window) lets the 50 MB seed be seen whole. */
export const ZSTD_ARGS = Object.freeze(['-9', '--long=27'])

/**
 * Installs the missing peers with apt-get (a fresh machine), once. Returns the tools available
 * afterwards; a tool that still is missing is skipped by the caller, with a note.
 */
export function ensurePeers(): Set<string> {
  return ensureCommands(Object.fromEntries(PEER_TOOLS.map((t) => [t, t])))
}

/** Clock ticks per second of /proc/PID/stat times (USER_HZ; 100 on Linux x86 and arm). */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100
  } catch (err) {
    if (err instanceof Error) return 100
    throw err
  }
})()

/**
 * CPU time, ms, of process `pid` and of its children it has waited for (utime + stime + cutime +
 * cstime of /proc/PID/stat): for this process, node itself and every tool run to completion.
 * On a loaded shared machine this is steadier than wall time. NaN where /proc is missing.
 */
export function cpuMs(pid: number | 'self' = 'self'): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces; the first
    // is field 3 (state), so utime, stime, cutime, cstime (fields 14–17) are at 11–14.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK
  } catch (err) {
    if (err instanceof Error) return Number.NaN
    throw err
  }
}

/** What one run of a tool sends: the seed side's signature and the target side's delta. */
export interface WireBytes {
  readonly sigBytes: number
  readonly deltaBytes: number
}

function run(tool: string, args: readonly string[]): string {
  return execFileSync(tool, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 * 1024 * 1024 })
}

async function sizeOf(path: string): Promise<number> {
  return (await stat(path)).size
}

/** rdiff signature + delta + patch, defaults (block size and strong-sum length recommended by
 *  librsync for the seed's size). */
export async function rdiff(seed: string, target: string, out: string, dir: string): Promise<WireBytes> {
  const sig = join(dir, 'rdiff.sig')
  const delta = join(dir, 'rdiff.delta')
  run('rdiff', ['-f', 'signature', seed, sig])
  run('rdiff', ['-f', 'delta', sig, target, delta])
  run('rdiff', ['-f', 'patch', seed, delta, out])
  return { sigBytes: await sizeOf(sig), deltaBytes: await sizeOf(delta) }
}

/** Block size and strong-sum length from an rdiff signature's 12-byte header (magic, block_len,
 *  strong_sum_len, big-endian). */
export async function rdiffSignatureParams(seed: string, dir: string): Promise<{ blockSize: number; strongBytes: number }> {
  const sig = join(dir, 'rdiff-params.sig')
  run('rdiff', ['-f', 'signature', seed, sig])
  const fh = await open(sig, 'r')
  try {
    const head = Buffer.alloc(12)
    await fh.read(head, 0, 12, 0)
    return { blockSize: head.readUInt32BE(4), strongBytes: head.readUInt32BE(8) }
  } finally {
    await fh.close()
  }
}

/** xdelta3 encode + decode, default level; the encoder reads the whole seed (-s). */
export async function xdelta3(seed: string, target: string, out: string, dir: string): Promise<WireBytes> {
  const delta = join(dir, 'xdelta3.delta')
  run('xdelta3', ['-e', '-f', '-s', seed, target, delta])
  run('xdelta3', ['-d', '-f', '-s', seed, delta, out])
  return { sigBytes: 0, deltaBytes: await sizeOf(delta) }
}

/** zstd --patch-from encode + decode (ZSTD_ARGS); the encoder reads the whole seed. */
export async function zstdPatch(seed: string, target: string, out: string, dir: string): Promise<WireBytes> {
  const delta = join(dir, 'zstd.delta')
  run('zstd', ['-q', '-f', ...ZSTD_ARGS, `--patch-from=${seed}`, target, '-o', delta])
  run('zstd', ['-q', '-d', '-f', '--long=27', `--patch-from=${seed}`, delta, '-o', out])
  return { sigBytes: 0, deltaBytes: await sizeOf(delta) }
}

/** A free TCP port on 127.0.0.1 (the OS picks it; closed again before rsync binds it). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      s.close(() => resolve(port))
    })
  })
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1')
      c.once('connect', () => {
        c.destroy()
        resolve(true)
      })
      c.once('error', () => resolve(false))
    })
    if (ok) return
    if (Date.now() > until) throw new Error(`rsync daemon did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * An rsync daemon on 127.0.0.1 serving one writable module, started from a temp rsyncd.conf.
 * A push to it is a real rsync transfer: the daemon (receiver, holding the seed) sends its
 * block checksums, the client (sender) sends the delta; `--stats` counts both directions.
 */
export class RsyncDaemon {
  readonly #child: ChildProcess
  private constructor(
    child: ChildProcess,
    readonly port: number,
    readonly moduleDir: string,
  ) {
    this.#child = child
  }

  static async start(dir: string): Promise<RsyncDaemon> {
    const moduleDir = join(dir, 'rsync-module')
    await mkdir(moduleDir, { recursive: true })
    const port = await freePort()
    const conf = join(dir, 'rsyncd.conf')
    // As root the daemon would switch to "nobody", who cannot write the temp dir.
    const ids = process.getuid?.() === 0 ? 'uid = 0\ngid = 0\n' : ''
    await writeFile(conf, `use chroot = no\n${ids}pid file = ${join(dir, 'rsyncd.pid')}\n[bench]\n  path = ${moduleDir}\n  read only = no\n`)
    const child = spawn('rsync', ['--daemon', '--no-detach', `--config=${conf}`, `--port=${port}`, '--address=127.0.0.1'], {
      stdio: 'ignore',
    })
    const daemon = new RsyncDaemon(child, port, moduleDir)
    // If this process ends without stop() (an uncaught error), the daemon must not outlive it.
    const reap = (): void => {
      child.kill('SIGTERM')
    }
    process.once('exit', reap)
    child.once('exit', () => process.off('exit', reap))
    try {
      await waitForPort(port, 5000)
    } catch (err) {
      await daemon.stop()
      throw err
    }
    return daemon
  }

  /** Puts a fresh copy of `seed` in the module: a push replaces it with the target, so each
   *  run needs one (done outside the caller's timer). */
  async prepare(seed: string): Promise<void> {
    await copyFile(seed, join(this.moduleDir, 'seed'))
  }

  /** Pushes `target` over the module's seed; `extra` adds options (-z). Returns the bytes rsync
   *  reports: received = the receiver's block checksums (signature), sent = the delta, file
   *  list and protocol overhead. */
  push(target: string, extra: readonly string[]): WireBytes {
    const out = run('rsync', [
      '--stats', '-a', '--ignore-times', '--no-whole-file', ...extra,
      target, `rsync://127.0.0.1:${this.port}/bench/seed`,
    ])
    const num = (label: string): number => {
      const m = new RegExp(`${label}: ([\\d,.]+)`).exec(out)
      if (m === null) throw new Error(`rsync --stats printed no "${label}":\n${out}`)
      return Number(m[1]!.replace(/[,.]/g, ''))
    }
    return { sigBytes: num('Total bytes received'), deltaBytes: num('Total bytes sent') }
  }

  /** CPU time of the daemon and the per-connection children it has reaped (the receiver's half
   *  of a transfer), ms. */
  cpuMs(): number {
    return this.#child.pid === undefined ? Number.NaN : cpuMs(this.#child.pid)
  }

  /** The file the last push rebuilt. */
  get result(): string {
    return join(this.moduleDir, 'seed')
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return
    const exited = new Promise<void>((r) => this.#child.once('exit', () => r()))
    this.#child.kill('SIGTERM')
    await exited
  }
}

/** True when the two files hold the same bytes (both fit in memory here: ≤ 64 MB). */
export async function sameBytes(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([readFile(a), readFile(b)])
  return x.equals(y)
}
