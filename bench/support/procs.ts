/**
 * Real dsync processes for benches: a `dsync serve` whose URL is read from its log, a client
 * run, and memory read from /proc (VmRSS polled, VmHWM = the kernel's own peak).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
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
