/**
 * The scale part of bench/sync.ts (issue 8, "speed at scale"): large new files, tens of
 * thousands of small files, no-ops and first syncs of trees that are already equal. Per case and
 * tool it measures what the issue judges: wall time and CPU seconds of the client, CPU seconds
 * and peak RSS of the server for that run, peak RSS of the client, bytes on the wire both ways.
 */
import { execFileSync } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { STATE_DIR_NAME } from '../../src/fs/index.js'
import { GiB, KiB } from './data.js'
import { overwriteScattered, writeRandomFile, writeSmallFiles } from './scale-data.js'
import { copyTree, meterServer, receiverOf, removeTree, treeDiff, type Servers, type SyncRun, type Tool } from './sync-tools.js'
import { median } from './timing.js'

/** The sender's data of a case; cases with the same `key` share one generated copy. */
interface ScaleData {
  readonly key: string
  write(dir: string): Promise<void>
}

export interface ScaleCase {
  /** Row label and `--case` name. */
  readonly id: string
  readonly what: string
  /** Opt-in (`--big`): minutes and many GiB of disk. */
  readonly big: boolean
  readonly data: ScaleData
  /** The receiver before a tool's first run: nothing, or a `cp -a` copy of the sender. */
  readonly receiver: 'empty' | 'copy'
  /** One unmeasured sync before the measured ones (the cases that measure "after a sync"). */
  readonly warm: boolean
  /**
   * Before each measured run. fresh: empty receiver, no dsync state on the sender (a first push:
   * state left by the previous run would hold the file's chunk list and skip its hashing);
   * forget: no dsync state on either side; none: as the previous run left it.
   */
  readonly eachRun: 'fresh' | 'forget' | 'none'
  /** Changes the sender before run `run` (then the sender is a private copy of the data). */
  edit?(dir: string, run: number): Promise<void>
}

const BIG_NAME = 'big.bin'

function bigFile(size: number, seed: number): ScaleData {
  return {
    key: `file-${size}-${seed}`,
    write: async (dir) => {
      await mkdir(dir, { recursive: true })
      await writeRandomFile(join(dir, BIG_NAME), size, seed)
    },
  }
}

function smallFiles(n: number): ScaleData {
  return { key: `small-${n}`, write: (dir) => writeSmallFiles(dir, n, 20_000) }
}

/** The cases of issue 8's table that bench/sync.ts's classes do not cover, sizes ÷ `shrink`. */
export function scaleCases(shrink: number): readonly ScaleCase[] {
  const s = (n: number): number => Math.max(1, Math.round(n / shrink))
  const size = (n: number): string => (n >= GiB ? `${n / GiB} GiB` : `${Math.round(n / 2 ** 20)} MiB`)
  const files = (n: number): string => s(n).toLocaleString('en-US')
  const oneGiB = s(GiB)
  const fourGiB = s(4 * GiB)
  const edits = s(1024)
  return [
    { id: 'new 1 GiB', what: `a new ${size(oneGiB)} file of incompressible bytes`, big: false, data: bigFile(oneGiB, 1), receiver: 'empty', warm: false, eachRun: 'fresh' },
    { id: 'new 4 GiB', what: `a new ${size(fourGiB)} file of incompressible bytes (--big)`, big: true, data: bigFile(fourGiB, 4), receiver: 'empty', warm: false, eachRun: 'fresh' },
    { id: 'push 20k', what: `first push of ${files(20_000)} small text files (100 B–8 KiB) to an empty receiver`, big: false, data: smallFiles(s(20_000)), receiver: 'empty', warm: false, eachRun: 'fresh' },
    { id: 'no-op 20k', what: `${files(20_000)} small files, nothing changed since the last sync`, big: false, data: smallFiles(s(20_000)), receiver: 'copy', warm: true, eachRun: 'none' },
    { id: 'no-op 100k', what: `${files(100_000)} small files in ${files(1000)} folders, nothing changed since the last sync`, big: false, data: smallFiles(s(100_000)), receiver: 'copy', warm: true, eachRun: 'none' },
    { id: 'no-op 1M', what: `${files(1_000_000)} small files in ${files(10_000)} folders, nothing changed since the last sync (--big)`, big: true, data: smallFiles(s(1_000_000)), receiver: 'copy', warm: true, eachRun: 'none' },
    { id: 'same 20k', what: `first sync of two identical ${files(20_000)}-file trees (cp -a: same size + mtime; no dsync state)`, big: false, data: smallFiles(s(20_000)), receiver: 'copy', warm: false, eachRun: 'forget' },
    { id: 'same 100k', what: `first sync of two identical ${files(100_000)}-file trees (cp -a; no dsync state)`, big: false, data: smallFiles(s(100_000)), receiver: 'copy', warm: false, eachRun: 'forget' },
    {
      id: 'overwrite 1 GiB',
      what: `${size(oneGiB)} file after a sync, ${edits} × 1 KiB overwritten in place at scattered offsets (new ones each run)`,
      big: false,
      data: bigFile(oneGiB, 1),
      receiver: 'copy',
      warm: true,
      eachRun: 'none',
      edit: (dir, run) => overwriteScattered(join(dir, BIG_NAME), edits, KiB, 8000 + run, run + 1),
    },
  ]
}

/** One tool's medians over the measured runs of one case. */
export interface ScaleResult {
  readonly tool: Tool
  readonly ms: number
  readonly clientCpuS: number
  readonly serverCpuS: number
  readonly sent: number
  readonly received: number
  readonly clientRss: number
  readonly serverRss: number
  /** '' when every run succeeded and ended with receiver == sender; else the first failure. */
  readonly failure: string
}

interface Measured {
  readonly run: SyncRun
  readonly serverCpuS: number
  readonly serverRss: number
}

/**
 * Writes every dirty page to disk before a measured run (coreutils `sync`), so that a run does
 * not pay for the writeback of what the setup (or the tool before it) wrote or deleted.
 */
function flushDisks(): void {
  execFileSync('sync')
}

/** A tree's dsync state (file records, chunk lists): without it a sync is a first sync. */
const forgetState = (tree: string): Promise<void> => removeTree(join(tree, STATE_DIR_NAME))

/** Runs `tool` on case `c` (setup, `runs` measured syncs each checked). The fresh receivers
 *  of its runs go into `leftovers`, for the caller to remove once every tool has run the case. */
async function measureScale(tool: Tool, c: ScaleCase, data: string, tmp: string, servers: Servers, runs: number, leftovers: string[]): Promise<ScaleResult> {
  const dir = `${c.id}-${tool.id}`.replace(/\W+/g, '-')
  const { path: recv, url } = receiverOf(tool, servers, dir)
  // Only an edited sender needs its own copy; the others read the generated data in place.
  const send = c.edit ? join(tmp, 'send', dir) : data
  if (c.edit) await copyTree(data, send)
  await removeTree(recv)
  if (c.receiver === 'copy') await copyTree(data, recv)
  let failure = ''
  if (c.warm) {
    const r = await tool.push(send, url)
    if (r.error !== '') failure ||= `unmeasured first sync failed: ${r.error}`
  }
  const measured: Measured[] = []
  // A fresh receiver is a new folder per run, all removed once every tool has run the case:
  // deleting 20,000 files just before a run made ext4 slow to create files for about a minute
  // (it passes over recently freed inodes: `recently_deleted` in `perf`), which weighed on
  // whichever tool came next (rsync -a's push 20k 0.94 s in one run, 3.2–7.3 s in others). Removed
  // after each tool's runs, they weighed on the tools after the first: dsync, last, spent 1.7–3.1
  // of its server's ~12 s in `open` (2026-11-27, by hand).
  for (let i = 0; i < runs; i++) {
    const target = c.eachRun === 'fresh' ? receiverOf(tool, servers, `${dir}-run${i}`) : { path: recv, url }
    if (c.eachRun === 'fresh') {
      leftovers.push(target.path)
      await Promise.all([removeTree(target.path), forgetState(send)])
    }
    if (c.eachRun === 'forget') await Promise.all([forgetState(recv), forgetState(send)])
    await c.edit?.(send, i)
    flushDisks()
    const server = meterServer(servers[tool.server])
    const run = await tool.push(send, target.url)
    const use = await server.stop()
    measured.push({ run, serverCpuS: use.cpuS, serverRss: use.peakRss })
    if (run.error !== '') failure ||= run.error
    const diff = await treeDiff(send, target.path)
    if (diff !== '') failure ||= `receiver != sender: ${diff}`
  }
  await removeTree(recv)
  await (c.edit ? removeTree(send) : forgetState(send))
  const med = (f: (m: Measured) => number): number => median(measured.map(f))
  return {
    tool,
    ms: Math.round(med((m) => m.run.ms)),
    clientCpuS: med((m) => m.run.cpuS),
    serverCpuS: med((m) => m.serverCpuS),
    sent: med((m) => m.run.sent),
    received: med((m) => m.run.received),
    clientRss: med((m) => m.run.peakRss),
    serverRss: med((m) => m.serverRss),
    failure,
  }
}

/**
 * Runs `cases` with each tool, generating each data set once under tmp/gen and deleting it
 * after the last case that uses it. `onCase` hears each finished case (progress lines).
 */
export async function runScale(
  cases: readonly ScaleCase[],
  tools: readonly Tool[],
  tmp: string,
  servers: Servers,
  runs: number,
  onCase: (c: ScaleCase, results: readonly ScaleResult[], seconds: number) => void,
): Promise<{ c: ScaleCase; results: ScaleResult[] }[]> {
  const all: { c: ScaleCase; results: ScaleResult[] }[] = []
  const generated = new Map<string, string>()
  for (const [i, c] of cases.entries()) {
    const t0 = performance.now()
    let data = generated.get(c.data.key)
    if (data === undefined) {
      data = join(tmp, 'gen', c.data.key)
      await c.data.write(data)
      generated.set(c.data.key, data)
      console.log(`  generated ${c.data.key} in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    }
    const results: ScaleResult[] = []
    const leftovers: string[] = []
    for (const tool of tools) results.push(await measureScale(tool, c, data, tmp, servers, runs, leftovers))
    await Promise.all(leftovers.map((p) => removeTree(p)))
    if (!cases.slice(i + 1).some((later) => later.data.key === c.data.key)) await removeTree(data)
    all.push({ c, results })
    onCase(c, results, (performance.now() - t0) / 1000)
  }
  return all
}
