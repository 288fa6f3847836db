/** Timings: warm up, run N times, report the median (robust to one slow run on a shared box). */

export interface Timing {
  /** Median wall time of the measured runs, ms. */
  readonly medianMs: number
  /** Fastest and slowest measured run, ms. */
  readonly minMs: number
  readonly maxMs: number
  /** Median CPU time (user + system) of this process over the same runs, ms. On a shared
   *  machine under load this is steadier than wall time, which includes waiting for a core. */
  readonly medianCpuMs: number
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** Runs `fn` `warmup` times unmeasured, then `runs` times measured. */
export async function time(fn: () => unknown, opts: { warmup?: number; runs?: number } = {}): Promise<Timing> {
  const { warmup = 1, runs = 5 } = opts
  for (let i = 0; i < warmup; i++) await fn()
  const ms: number[] = []
  const cpu: number[] = []
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    await fn()
    ms.push(performance.now() - t0)
    const c = process.cpuUsage(c0)
    cpu.push((c.user + c.system) / 1000)
  }
  return { medianMs: median(ms), minMs: Math.min(...ms), maxMs: Math.max(...ms), medianCpuMs: median(cpu) }
}

/** Throughput in MB/s (10^6 bytes per second, as `dd` and the papers count). */
export function mbps(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000)
}
