/**
 * dsync against a real rsync daemon (issue 4, "Benchmark"): the same seeded before/after trees
 * synced over 127.0.0.1 by rsync -a, rsync -az, rsync --fuzzy and dsync push, each to its own
 * server process. Each tool first syncs "before", then the sender's tree becomes "after" and
 * only that second sync is measured: bytes on the wire both ways (rsync's --stats totals, dsync's
 * summary) and the wall time of the command. The receiver must then equal the sender.
 *
 * DSYNC_BENCH_QUICK=1 shrinks the data 10x; DSYNC_BENCH_RUNS=N sets the measured runs (median).
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { syncClasses, writeTrees, type SyncClass } from './support/sync-data.js'
import {
  dsyncPush,
  ensureRsync,
  materialize,
  removeTree,
  rsyncPush,
  startDsyncServer,
  startRsyncDaemon,
  treeDiff,
  type Daemon,
  type SyncRun,
} from './support/sync-tools.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'
import { median } from './support/timing.js'

interface Tool {
  /** Directory-safe id, also the row label. */
  readonly id: string
  readonly server: 'rsync' | 'dsync'
  /** Bytes only: run once, time not reported (the jaccard / lcs "what would it send" reruns). */
  readonly bytesOnly: boolean
  push(src: string, url: string): Promise<SyncRun>
}

const rsyncTool = (id: string, flags: readonly string[]): Tool => ({ id, server: 'rsync', bytesOnly: false, push: (src, url) => rsyncPush(flags, src, url) })
const dsyncTool = (id: string, extra: readonly string[], bytesOnly: boolean): Tool => ({ id, server: 'dsync', bytesOnly, push: (src, url) => dsyncPush(src, url, extra) })

const TOOLS: readonly Tool[] = [
  rsyncTool('rsync -a', ['-a', '--no-whole-file']),
  rsyncTool('rsync -az', ['-az', '--no-whole-file']),
  // --fuzzy looks for a basis among the files being deleted, so they must still be there.
  rsyncTool('rsync fuzzy', ['-a', '--no-whole-file', '--fuzzy', '--delete-after']),
  dsyncTool('dsync', [], false),
  dsyncTool('dsync jaccard', ['--metric', 'jaccard'], true),
  dsyncTool('dsync lcs', ['--metric', 'lcs'], true),
]

/** One tool's measured result for one class. */
interface Result {
  readonly tool: Tool
  readonly sent: number
  readonly received: number
  readonly ms: number
  /** '' when every run ended with receiver == sender; else the first failure. */
  readonly failure: string
  readonly actions: Readonly<Record<string, number>>
}

interface Servers {
  readonly rsync: Daemon
  readonly dsync: Daemon
  readonly rsyncRoot: string
  readonly dsyncRoot: string
}

/** before → (unmeasured) sync, after → measured sync, check; `runs` times; medians. */
async function measure(tool: Tool, id: string, c: SyncClass, trees: { before: string; after: string }, tmp: string, servers: Servers, runs: number): Promise<Result> {
  const dir = `${id}-${tool.id.replace(/\W+/g, '-')}`
  const send = join(tmp, 'send', dir)
  const recv = join(tool.server === 'rsync' ? servers.rsyncRoot : servers.dsyncRoot, dir)
  const url = `${servers[tool.server].url}/${dir}`
  await mkdir(send, { recursive: true })
  if (c.seedByCopy === true) await materialize(trees.before, recv)
  const measured: SyncRun[] = []
  let failure = ''
  for (let i = 0; i < (tool.bytesOnly ? 1 : runs); i++) {
    await materialize(trees.before, send)
    const reset = await tool.push(send, url)
    if (reset.error !== '') failure ||= `sync of "before" failed: ${reset.error}`
    await materialize(trees.after, send)
    const run = await tool.push(send, url)
    measured.push(run)
    if (run.error !== '') failure ||= run.error
    const diff = await treeDiff(send, recv)
    if (diff !== '') failure ||= `receiver != sender: ${diff}`
  }
  await removeTree(send)
  await removeTree(recv)
  return {
    tool,
    sent: median(measured.map((r) => r.sent)),
    received: median(measured.map((r) => r.received)),
    ms: Math.round(median(measured.map((r) => r.ms))),
    failure,
    actions: measured[measured.length - 1]!.actions,
  }
}

const total = (r: Result): number => r.sent + r.received
const ratio = (x: number, y: number): Cell => (y > 0 && Number.isFinite(x) ? Math.round((x / y) * 1000) / 1000 : '-')
const actionText = (a: Readonly<Record<string, number>>): string =>
  Object.entries(a)
    .filter(([k]) => k !== 'unchanged')
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')

async function runClass(c: SyncClass, index: number, tmp: string, servers: Servers, runs: number): Promise<Result[]> {
  const id = `c${index}`
  const { before, after } = c.make()
  const trees = await writeTrees(join(tmp, 'gen', id), before, after)
  const results: Result[] = []
  for (const tool of TOOLS) {
    if (tool.bytesOnly && !c.metricVariants) continue
    results.push(await measure(tool, id, c, trees, tmp, servers, runs))
  }
  await removeTree(join(tmp, 'gen', id))
  return results
}

/** The commit measured, and whether the working tree had changes on top (engineers share it). */
function revision(): string {
  const root = new URL('../..', import.meta.url)
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'protocol'], { cwd: root }).toString().trim() !== ''
    return `${head}${dirty ? ' + uncommitted changes in src/' : ''}`
  } catch (err) {
    // Outside a git checkout the figures still stand; say so instead of failing the bench.
    return `(no git revision: ${String(err).split('\n')[0]})`
  }
}

export async function run(): Promise<void> {
  ensureRsync()
  const quick = process.env['DSYNC_BENCH_QUICK'] === '1'
  const runs = Number(process.env['DSYNC_BENCH_RUNS'] ?? (quick ? 1 : 3))
  const classes = syncClasses(quick ? 10 : 1)
  const tmp = await mkdtemp(join(tmpdir(), 'dsync-bench-sync-'))
  const rsyncRoot = join(tmp, 'srv-rsync')
  const dsyncRoot = join(tmp, 'srv-dsync')
  await mkdir(rsyncRoot)
  await mkdir(dsyncRoot)
  printEnvironment()
  console.log(`dsync ${revision()}`)
  console.log(execFileSync('rsync', ['--version']).toString().split('\n')[0])
  console.log(`${quick ? 'QUICK (sizes ÷10), ' : ''}median of ${runs} measured run(s) per tool; jaccard/lcs: one run, bytes only`)
  for (const c of classes) console.log(`  ${c.name.padEnd(17)} ${c.what}`)
  let rsync: Daemon | undefined
  let dsync: Daemon | undefined
  const cleanup = async (): Promise<void> => {
    await dsync?.stop()
    await rsync?.stop()
    await removeTree(tmp)
  }
  // Ctrl+C or a kill must not leave two servers listening and a GiB of temp files behind.
  const onSignal = (sig: NodeJS.Signals): void => {
    console.error(`\n${sig}: stopping the servers and removing ${tmp}`)
    void cleanup().finally(() => process.exit(130))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const all: { c: SyncClass; results: Result[] }[] = []
  try {
    rsync = await startRsyncDaemon(tmp, rsyncRoot)
    dsync = await startDsyncServer(dsyncRoot)
    const servers: Servers = { rsync, dsync, rsyncRoot, dsyncRoot }
    for (const [i, c] of classes.entries()) {
      const t0 = performance.now()
      const results = await runClass(c, i, tmp, servers, runs)
      all.push({ c, results })
      const line = results.filter((r) => !r.tool.bytesOnly).map((r) => `${r.tool.id} ${total(r)} B ${r.ms} ms`)
      console.log(`  done: ${c.name} (${((performance.now() - t0) / 1000).toFixed(1)} s): ${line.join(', ')}`)
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await cleanup()
  }

  const detail: Cell[][] = []
  for (const { c, results } of all)
    for (const r of results)
      detail.push([c.name, r.tool.id, r.sent, r.received, total(r), r.tool.bytesOnly ? '-' : r.ms, r.failure === '' ? 'ok' : 'FAIL', actionText(r.actions)])
  printTable('Per tool: bytes on the wire (client sent / received) and wall time of the sync command', ['class', 'tool', 'sent', 'received', 'total', 'wall ms', 'check', 'dsync actions'], detail, 0)

  const summary: Cell[][] = all.map(({ c, results }) => {
    const by = (id: string): Result | undefined => results.find((r) => r.tool.id === id)
    const bytes = (id: string): Cell => {
      const r = by(id)
      return r ? total(r) : '-'
    }
    const ms = (id: string): Cell => by(id)?.ms ?? '-'
    const [d, az] = [by('dsync')!, by('rsync -az')!]
    return [c.name, bytes('rsync -a'), bytes('rsync -az'), bytes('rsync fuzzy'), bytes('dsync'), ratio(total(d), total(az)), bytes('dsync jaccard'), bytes('dsync lcs'),
      ms('rsync -a'), ms('rsync -az'), ms('rsync fuzzy'), ms('dsync'), ratio(d.ms, az.ms)]
  })
  printTable(
    'Summary: total bytes both ways, wall ms; ÷az = dsync ÷ rsync -az (< 1: dsync better); jaccard/lcs = bytes dsync sends under that rule',
    ['class', 'B -a', 'B -az', 'B fuzzy', 'B dsync', '÷az B', 'B jaccard', 'B lcs', 'ms -a', 'ms -az', 'ms fuzzy', 'ms dsync', '÷az ms'],
    summary,
    3,
  )
  const failures = all.flatMap(({ c, results }) => results.filter((r) => r.failure !== '').map((r) => `FAIL ${c.name} / ${r.tool.id}: ${r.failure}`))
  for (const f of failures) console.log(f)
}
