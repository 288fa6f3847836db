/**
 * Delta benchmark (issue 3): for six classes of change, the bytes on the wire (signature +
 * delta) and the time (signature + delta + patch) of dsync beside rdiff, rsync over a daemon on
 * 127.0.0.1, xdelta3 and zstd --patch-from; then dsync's peak RSS on a 2 GiB pair. Seeded data
 * in a temp dir, deleted at the end. `DSYNC_BENCH_QUICK=1`: one run per tool, no 2 GiB pair.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { codeText, editCode, insertAt, logText, mixSixtyForty, overwrite, scatteredEdits, writeBigPair } from './support/delta-data.js'
import { dsyncRound, type DsyncRound } from './support/delta-dsync.js'
import {
  cpuMs,
  ensurePeers,
  rdiff,
  rdiffSignatureParams,
  RsyncDaemon,
  sameBytes,
  xdelta3,
  ZSTD_ARGS,
  zstdPatch,
  type WireBytes,
} from './support/delta-peers.js'
import { GiB, KiB, MiB, seededBytes } from './support/data.js'
import { mib, printEnvironment, printTable, type Cell } from './support/table.js'
import { mbps, median } from './support/timing.js'

const QUICK = process.env['DSYNC_BENCH_QUICK'] === '1'
/** Timed runs per tool and class: the median is reported (each run is a whole round). */
const RUNS = QUICK ? 1 : 3
/** A tool stops repeating once its runs for a class have taken this long (xdelta3 on an
 *  unrelated 20 MiB target took 36 s here): the median is then of fewer runs. */
const RUN_BUDGET_MS = 15_000
const BIG_BYTES = 2 * GiB
const BIG_EDITS = 16

/** One class of change: a seed and the target the receiver should end up with. */
interface ChangeClass {
  readonly name: string
  make(): { seed: Uint8Array; target: Uint8Array }
}

const CLASSES: readonly ChangeClass[] = [
  {
    name: 'source text 2 MiB, 20 small edits',
    make: () => {
      const seed = codeText(11, 2 * MiB)
      return { seed, target: editCode(seed, 12, 20) }
    },
  },
  {
    name: '20 MiB binary, 100 B inserted at 1000',
    make: () => {
      const seed = seededBytes(21, 20 * MiB)
      return { seed, target: insertAt(seed, 22, 1000, 100) }
    },
  },
  {
    name: '50 MiB binary, 100 × 64 B overwrites',
    make: () => {
      const seed = seededBytes(31, 50 * MiB)
      return { seed, target: overwrite(seed, 32, 100, 64) }
    },
  },
  {
    name: '20 MiB log, 1 MiB appended',
    make: () => {
      const all = logText(41, 0, 21 * MiB)
      const cut = all.lastIndexOf(0x0a, 20 * MiB) + 1
      return { seed: all.subarray(0, cut), target: all }
    },
  },
  {
    name: '20 MiB source text, 60% seed + 40% new',
    make: () => {
      const seed = codeText(51, 20 * MiB)
      return { seed, target: mixSixtyForty(seed, codeText(52, 20 * MiB), 53) }
    },
  },
  {
    name: '20 MiB binary, unrelated target',
    make: () => ({ seed: seededBytes(61, 20 * MiB), target: seededBytes(62, 20 * MiB) }),
  },
]

/** A tool as the benchmark drives it: prepare (untimed), then one timed round. */
interface Tool {
  readonly name: string
  readonly needs: string
  prepare?(seed: string): Promise<void>
  round(seed: string, target: string, dir: string): Promise<WireBytes & { out: string }>
  /** CPU ms spent outside this process tree's reaped children (the rsync daemon's side). */
  remoteCpuMs?(): number
}

interface Measured {
  readonly tool: string
  readonly wire: WireBytes
  readonly ms: number
  readonly cpuMs: number
  /** 'ok', or 'FAIL' and why: the rebuilt file differs from the target, or the tool failed. */
  readonly check: string
}

async function measure(tool: Tool, seed: string, target: string, dir: string): Promise<Measured> {
  const ms: number[] = []
  const cpu: number[] = []
  let last: (WireBytes & { out: string }) | undefined
  try {
    for (let i = 0; i < RUNS && ms.reduce((a, b) => a + b, 0) < RUN_BUDGET_MS; i++) {
      await rm(join(dir, 'out'), { force: true })
      await tool.prepare?.(seed)
      const c0 = cpuMs() + (tool.remoteCpuMs?.() ?? 0)
      const t0 = performance.now()
      last = await tool.round(seed, target, dir)
      ms.push(performance.now() - t0)
      // The daemon reaps its connection child just after the client exits: wait for that.
      if (tool.remoteCpuMs !== undefined) await new Promise((r) => setTimeout(r, 100))
      cpu.push(cpuMs() + (tool.remoteCpuMs?.() ?? 0) - c0)
    }
  } catch (err) {
    // A benchmark reports a failing tool in its table and goes on with the others.
    const why = err instanceof Error ? err.message.split('\n')[0]! : String(err)
    return { tool: tool.name, wire: { sigBytes: 0, deltaBytes: 0 }, ms: Number.NaN, cpuMs: Number.NaN, check: `FAIL: ${why}` }
  }
  const r = last!
  const same = await sameBytes(r.out, target)
  return { tool: tool.name, wire: r, ms: median(ms), cpuMs: median(cpu), check: same ? 'ok' : 'FAIL: rebuilt file differs' }
}

function tools(dsyncRounds: DsyncRound[], daemon: RsyncDaemon | null): Tool[] {
  const out = (dir: string): string => join(dir, 'out')
  const list: Tool[] = [
    {
      name: 'dsync',
      needs: 'node',
      round: async (seed, target, dir) => {
        const r = await dsyncRound(seed, target, out(dir), dir)
        dsyncRounds.push(r)
        return { ...r, out: out(dir) }
      },
    },
    { name: 'rdiff', needs: 'rdiff', round: async (s, t, dir) => ({ ...(await rdiff(s, t, out(dir), dir)), out: out(dir) }) },
  ]
  if (daemon !== null) {
    const d = daemon
    for (const [name, extra] of [['rsync', []], ['rsync -z (zstd)', ['-z', '--zc=zstd']]] as const) {
      list.push({
        name,
        needs: 'rsync',
        prepare: (seed) => d.prepare(seed),
        round: async (_s, t) => ({ ...d.push(t, extra), out: d.result }),
        remoteCpuMs: () => d.cpuMs(),
      })
    }
  }
  list.push(
    { name: 'xdelta3 -e -s', needs: 'xdelta3', round: async (s, t, dir) => ({ ...(await xdelta3(s, t, out(dir), dir)), out: out(dir) }) },
    {
      name: `zstd ${ZSTD_ARGS.join(' ')} --patch-from`,
      needs: 'zstd',
      round: async (s, t, dir) => ({ ...(await zstdPatch(s, t, out(dir), dir)), out: out(dir) }),
    },
  )
  return list
}

/** "dsync ÷ tool" as text with two decimals (a ratio below 1 means dsync sent or took less). */
function ratio(dsync: number, other: number): string {
  return other > 0 ? (dsync / other).toFixed(2) : '-'
}

async function deltaClasses(dir: string, available: Set<string>, daemon: RsyncDaemon | null): Promise<void> {
  const sizeRows: Cell[][] = []
  const timeRows: Cell[][] = []
  const paramRows: Cell[][] = []
  for (const c of CLASSES) {
    const { seed, target } = c.make()
    const seedPath = join(dir, 'seed')
    const targetPath = join(dir, 'target')
    await writeFile(seedPath, seed)
    await writeFile(targetPath, target)
    const rounds: DsyncRound[] = []
    const results: Measured[] = []
    for (const tool of tools(rounds, daemon)) {
      if (tool.needs !== 'node' && !available.has(tool.needs)) continue
      results.push(await measure(tool, seedPath, targetPath, dir))
    }
    const d = results[0]!
    const dTotal = d.wire.sigBytes + d.wire.deltaBytes
    for (const r of results) {
      const total = r.wire.sigBytes + r.wire.deltaBytes
      sizeRows.push([c.name, r.tool, r.wire.sigBytes / KiB, r.wire.deltaBytes / KiB, total / KiB, ratio(dTotal, total), r.check])
      timeRows.push([c.name, r.tool, r.ms / 1000, r.cpuMs / 1000, mbps(target.length, r.cpuMs), ratio(d.cpuMs, r.cpuMs)])
    }
    const dr = rounds[rounds.length - 1]
    if (dr === undefined) continue
    const rd = available.has('rdiff') ? await rdiffSignatureParams(seedPath, dir) : { blockSize: 0, strongBytes: 0 }
    const rsync = results.find((r) => r.tool === 'rsync')
    paramRows.push([
      c.name,
      mib(target.length),
      dr.blockSize,
      dr.keyBits,
      rd.blockSize,
      (4 + rd.strongBytes) * 8,
      dr.stats.copiedBytes / KiB,
      dr.stats.literalBytes / KiB,
      dr.deltaBytes / KiB,
      rsync === undefined ? '-' : (rsync.wire.sigBytes / KiB).toFixed(1),
      median(rounds.map((x) => x.signatureMs)) / 1000,
      median(rounds.map((x) => x.deltaMs)) / 1000,
      median(rounds.map((x) => x.patchMs)) / 1000,
    ])
  }
  printTable(
    'Bytes on the wire: signature (seed side) + delta (target side), KiB; xdelta3 and zstd read the whole seed, so they send no signature',
    ['class', 'tool', 'sig KiB', 'delta KiB', 'total KiB', 'dsync ÷ tool', 'rebuilt'],
    sizeRows,
    1,
  )
  printTable(
    `Time: signature + delta + patch (rsync: one push, both ends), median of ${RUNS} runs (fewer once a tool's runs pass ${RUN_BUDGET_MS / 1000} s), files in the page cache; CPU = user + system of all processes`,
    ['class', 'tool', 'wall s', 'CPU s', 'MB/s per CPU s', 'dsync ÷ tool (CPU)'],
    timeRows,
    2,
  )
  printTable(
    'Inside dsync: blocks, bits per block (rdiff: 4 B rolling + strong sum), what matched, and where the time went',
    ['class', 'target MiB', 'dsync block', 'dsync bits', 'rdiff block', 'rdiff bits', 'copied KiB', 'literal KiB raw', 'delta KiB', 'rsync sig KiB', 'sig s', 'delta s', 'patch s'],
    paramRows,
    2,
  )
}

/** The 2 GiB pair through dsync in a child process; prints one table row of memory and time. */
async function bigPair(dir: string): Promise<void> {
  const seed = join(dir, 'big-seed')
  const target = join(dir, 'big-target')
  const edits = scatteredEdits(71, BIG_BYTES, BIG_EDITS)
  await writeBigPair(seed, target, BIG_BYTES, edits)
  const child = fileURLToPath(new URL('./support/delta-memory-child.js', import.meta.url))
  const out = execFileSync(process.execPath, [child, seed, target, dir], { encoding: 'utf8' })
  const r = JSON.parse(out) as { round: DsyncRound; cpuMs: number; sameBytes: boolean; baseRss: number; peakRss: number }
  const s = (r.round.signatureMs + r.round.deltaMs + r.round.patchMs) / 1000
  const kinds = ['overwrite', 'insert', 'delete'].map((k) => `${edits.filter((e) => e.kind === k).length} ${k}`).join(', ')
  printTable(
    `Memory: dsync on a 2 GiB seed/target pair (${kinds}), streamed through the API in a fresh process (RSS: its VmHWM)`,
    ['pair', 'sig KiB', 'delta KiB', 'sig s', 'delta s', 'patch s', 'MB/s', 'MB/s per CPU s', 'node at start MiB', 'peak RSS MiB', 'rebuilt'],
    [[
      '2 GiB',
      r.round.sigBytes / KiB,
      r.round.deltaBytes / KiB,
      r.round.signatureMs / 1000,
      r.round.deltaMs / 1000,
      r.round.patchMs / 1000,
      mbps(BIG_BYTES, s * 1000),
      mbps(BIG_BYTES, r.cpuMs),
      mib(r.baseRss),
      mib(r.peakRss),
      r.sameBytes ? 'ok' : 'FAIL',
    ]],
    1,
  )
}

export async function run(): Promise<void> {
  printEnvironment()
  const available = ensurePeers()
  const dir = await mkdtemp(join(tmpdir(), 'dsync-bench-delta-'))
  let daemon: RsyncDaemon | null = null
  try {
    daemon = available.has('rsync') ? await RsyncDaemon.start(dir) : null
    await deltaClasses(dir, available, daemon)
    await daemon?.stop()
    daemon = null
    if (QUICK) console.log('\nDSYNC_BENCH_QUICK=1: 2 GiB memory case skipped')
    else await bigPair(dir)
  } finally {
    await daemon?.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
