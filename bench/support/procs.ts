/**
 * Real dsync processes for benches: a `dsync serve` whose URL is read from its log, a client
 * run, and memory read from /proc (VmRSS polled, VmHWM = the kernel's own peak).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** dsync's executable, from dist/bench/support/. */
export const DSYNC_BIN = fileURLToPath(new URL('../../../bin/dsync.js', import.meta.url))

/** A spawned dsync, its output collected. */
export interface DsyncProcess {
  readonly child: ChildProcess
  readonly output: { stdout: string; stderr: string }
  readonly exited: Promise<number | string>
}

export function spawnDsync(args: readonly string[], env: Record<string, string> = {}): DsyncProcess {
  const child = spawn(process.execPath, [DSYNC_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = { stdout: '', stderr: '' }
  child.stdout!.on('data', (b: Buffer) => (output.stdout += b.toString()))
  child.stderr!.on('data', (b: Buffer) => (output.stderr += b.toString()))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')))
  return { child, output, exited }
}

/** `dsync serve --root root --port 0` on 127.0.0.1 without a token; resolves with its URL. */
export async function spawnServer(root: string): Promise<DsyncProcess & { url: string }> {
  const p = spawnDsync(['serve', '--root', root, '--port', '0'])
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = / at (ws:\/\/127\.0\.0\.1:\d+)/.exec(p.output.stderr)
      if (m) {
        clearInterval(timer)
        resolve(m[1]!)
      }
    }, 20)
    void p.exited.then((c) => {
      clearInterval(timer)
      reject(new Error(`dsync serve exited (${c}): ${p.output.stderr}`))
    })
  })
  return Object.assign(p, { url })
}

/** One field of /proc/PID/status in bytes (VmRSS, VmHWM), or 0 once the process is gone. */
export function procStatusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

/** Polls a process's memory every `everyMs` until stopped: the peak of VmRSS and VmHWM seen. */
export function watchMemory(pid: number, everyMs = 50): { stop(): number; peak(): number } {
  let peak = 0
  const look = (): void => {
    peak = Math.max(peak, procStatusBytes(pid, 'VmRSS'), procStatusBytes(pid, 'VmHWM'))
  }
  look()
  const timer = setInterval(look, everyMs)
  return {
    peak: () => peak,
    stop: () => {
      look()
      clearInterval(timer)
      return peak
    },
  }
}

/** `--name value` from argv, or undefined. */
export function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : undefined
}

/** "4g", "512m", "100k", "1234" → bytes. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kmg]?)i?b?$/i.exec(text.trim())
  if (!m) throw new Error(`not a size: ${text} (e.g. 4g, 512m)`)
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g']
  return Math.round(Number(m[1]) * unit)
}

/** Clock ticks per second of /proc/PID/stat times (USER_HZ: 100 on every Linux we run on). */
const CLOCK_TICKS = 100

/**
 * CPU seconds (user + system) of a process from /proc/PID/stat: its own, and those of its
 * children it has reaped (cutime + cstime), which the kernel adds at wait() time. NaN once the
 * process is gone. `process.resourceUsage()` only knows this process, never a spawned one.
 */
export function procCpu(pid: number | 'self'): { self: number; children: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which may hold spaces and parentheses: state is field 3.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const tick = (i: number): number => Number(f[i - 3]) / CLOCK_TICKS
    return { self: tick(14) + tick(15), children: tick(16) + tick(17) }
  } catch {
    return { self: NaN, children: NaN }
  }
}

/** Live (or not yet reaped) children of a process, from /proc/PID/task/TID/children. */
export function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    )
  } catch {
    return []
  }
}

/** `pid` and everything it has forked that still runs, depth first. */
export function processTree(pid: number): number[] {
  return [pid, ...childPids(pid).flatMap(processTree)]
}

/**
 * Sets the process's VmHWM back to its current RSS (`echo 5 > /proc/PID/clear_refs`), so that a
 * long-running server's peak can be read per run. False when the kernel refuses.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/**
 * Peak memory of a process and the processes it forks, polled every `everyMs` until stopped:
 * the larger of (a) the highest sum of VmRSS over the live tree seen at one poll and (b) the
 * highest VmHWM of any one process (the kernel's own peak, exact between polls). For one process
 * (node) that is its VmHWM; for rsync's daemon session (a forked receiver + generator pair) it
 * is their summed RSS, sampled, with pages they share since the fork counted twice.
 */
export function watchTreeMemory(pid: number, everyMs = 20): { stop(): number } {
  let peak = 0
  const look = (): void => {
    let sum = 0
    for (const p of processTree(pid)) {
      sum += procStatusBytes(p, 'VmRSS')
      peak = Math.max(peak, procStatusBytes(p, 'VmHWM'))
    }
    peak = Math.max(peak, sum)
  }
  look()
  const timer = setInterval(look, everyMs)
  return {
    stop: () => {
      look()
      clearInterval(timer)
      return peak
    },
  }
}
