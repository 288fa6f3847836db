/**
 * dsync against a real rsync daemon, each its own server process on 127.0.0.1. Two parts:
 *
 * - classes (issue 4, "Benchmark"): the same seeded before/after trees synced by rsync -a,
 *   rsync -az, rsync --fuzzy and dsync push. Each tool first syncs "before", then the sender's
 *   tree becomes "after" and only that second sync is measured: bytes on the wire both ways
 *   (rsync's --stats totals, dsync's summary) and the wall time of the command.
 * - scale (issue 8, "speed at scale", support/sync-scale.ts): large new files, 20,000- and
 *   100,000-file trees; wall and CPU time, bytes and peak RSS of client and server, per tool.
 *
 * Every measured run ends with a check that the receiver equals the sender.
 *
 * `npm run bench -- sync [--classes] [--scale] [--case NAME]… [--big]`: no part flag runs both;
 * `--case` (repeatable) picks cases of either part by name; the 4 GiB case runs only with
 * `--big` or when named. DSYNC_BENCH_QUICK=1 shrinks the data 10x; DSYNC_BENCH_RUNS=N sets the
 * measured runs (median; default 3).
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { syncClasses, writeTrees, type SyncClass } from './support/sync-data.js'
import { runScale, scaleCases, type ScaleCase, type ScaleResult } from './support/sync-scale.js'
import {
  dsyncTool,
  ensureRsync,
  materialize,
  receiverOf,
  removeTree,
  rsyncTool,
  startDsyncServer,
  startRsyncDaemon,
  treeDiff,
  type Daemon,
  type Servers,
  type SyncRun,
  type Tool,
} from './support/sync-tools.js'
import { mib, printEnvironment, printTable, type Cell } from './support/table.js'
import { median } from './support/timing.js'

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

/** before → (unmeasured) sync, after → measured sync, check; `runs` times; medians. */
async function measure(tool: Tool, id: string, c: SyncClass, trees: { before: string; after: string }, tmp: string, servers: Servers, runs: number): Promise<Result> {
  const dir = `${id}-${tool.id.replace(/\W+/g, '-')}`
  const send = join(tmp, 'send', dir)
  const { path: recv, url } = receiverOf(tool, servers, dir)
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

/** Which cases to run, from the argv after `sync` (see the header comment). */
interface Selection {
  readonly classes: readonly SyncClass[]
  readonly scale: readonly ScaleCase[]
  /** Big scale cases left out (no `--big`), to say so. */
  readonly skipped: readonly ScaleCase[]
}

function select(argv: readonly string[], shrink: number): Selection {
  const known = ['--classes', '--scale', '--big', '--case']
  const unknown = argv.filter((a, i) => argv[i - 1] !== '--case' && !known.includes(a))
  if (unknown.length > 0) throw new Error(`bench sync: unknown option ${unknown.join(' ')} (known: ${known.join(' ')} NAME)`)
  const named = argv.flatMap((a, i) => (argv[i - 1] === '--case' ? [a.toLowerCase()] : []))
  const classes = syncClasses(shrink)
  const scale = scaleCases(shrink)
  const missing = named.filter((n) => ![...classes.map((c) => c.name), ...scale.map((c) => c.id)].some((x) => x.toLowerCase() === n))
  if (missing.length > 0)
    throw new Error(`bench sync: no case ${missing.join(', ')}; cases: ${[...classes.map((c) => c.name), ...scale.map((c) => c.id)].join(', ')}`)
  const big = argv.includes('--big')
  if (named.length > 0) {
    return {
      classes: classes.filter((c) => named.includes(c.name.toLowerCase())),
      scale: scale.filter((c) => named.includes(c.id.toLowerCase())),
      skipped: [],
    }
  }
  const onlyClasses = argv.includes('--classes') && !argv.includes('--scale')
  const onlyScale = argv.includes('--scale') && !argv.includes('--classes')
  const scaleWanted = onlyClasses ? [] : scale
  return {
    classes: onlyScale ? [] : classes,
    scale: scaleWanted.filter((c) => big || !c.big),
    skipped: scaleWanted.filter((c) => c.big && !big),
  }
}

export async function run(): Promise<void> {
  const quick = process.env['DSYNC_BENCH_QUICK'] === '1'
  const runs = Number(process.env['DSYNC_BENCH_RUNS'] ?? (quick ? 1 : 3))
  // bench/run.ts passes everything from the first `--flag` on to the benches.
  const firstFlag = process.argv.findIndex((a) => a.startsWith('--'))
  const { classes, scale, skipped } = select(firstFlag < 0 ? [] : process.argv.slice(firstFlag), quick ? 10 : 1)
  ensureRsync()
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
  for (const c of scale) console.log(`  ${c.id.padEnd(17)} ${c.what}`)
  for (const c of skipped) console.log(`  (skipped: ${c.id}, ${c.what}: it takes minutes and several GiB of disk; add --big to run it)`)
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
  const classResults: { c: SyncClass; results: Result[] }[] = []
  let scaleResults: { c: ScaleCase; results: ScaleResult[] }[] = []
  try {
    rsync = await startRsyncDaemon(tmp, rsyncRoot)
    dsync = await startDsyncServer(dsyncRoot)
    const servers: Servers = { rsync, dsync, rsyncRoot, dsyncRoot }
    for (const [i, c] of classes.entries()) {
      const t0 = performance.now()
      const results = await runClass(c, i, tmp, servers, runs)
      classResults.push({ c, results })
      const line = results.filter((r) => !r.tool.bytesOnly).map((r) => `${r.tool.id} ${total(r)} B ${r.ms} ms`)
      console.log(`  done: ${c.name} (${((performance.now() - t0) / 1000).toFixed(1)} s): ${line.join(', ')}`)
    }
    // Every figure of a case as soon as it is done: a run stopped in its 100,000-file cases
    // still leaves the finished ones on record.
    scaleResults = await runScale(scale, SCALE_TOOLS, tmp, servers, runs, (c, results, seconds) => {
      console.log(`  done: ${c.id} (${seconds.toFixed(1)} s)`)
      for (const r of results)
        console.log(
          `    ${r.tool.id}: ${r.ms} ms, CPU ${r.clientCpuS.toFixed(2)} client + ${r.serverCpuS.toFixed(2)} server s, ` +
            `${r.sent} B sent, ${r.received} B received, RSS ${mib(r.clientRss)} client / ${mib(r.serverRss)} server MiB${r.failure === '' ? '' : ` FAIL ${r.failure}`}`,
        )
    })
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await cleanup()
  }
  if (classResults.length > 0) reportClasses(classResults)
  if (scaleResults.length > 0) reportScale(scaleResults)
  const failures = [
    ...classResults.flatMap(({ c, results }) => results.filter((r) => r.failure !== '').map((r) => `FAIL ${c.name} / ${r.tool.id}: ${r.failure}`)),
    ...scaleResults.flatMap(({ c, results }) => results.filter((r) => r.failure !== '').map((r) => `FAIL ${c.id} / ${r.tool.id}: ${r.failure}`)),
  ]
  for (const f of failures) console.log(f)
}

function reportClasses(all: readonly { c: SyncClass; results: Result[] }[]): void {
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
}

/**
 * The scale part compares dsync with plain rsync (the flags issue 8 names), and with rsync
 * --fsync: dsync fsyncs every file it writes before its rename (DESIGN.md), rsync by default
 * none, so -a --fsync is rsync with dsync's guarantee (what that costs each: bench/README.md
 * "A first push of many small files").
 */
const SCALE_TOOLS: readonly Tool[] = [
  rsyncTool('rsync -a', ['-a']),
  rsyncTool('rsync -az', ['-az']),
  rsyncTool('rsync -a --fsync', ['-a', '--fsync']),
  dsyncTool('dsync', [], false),
]

const seconds = (ms: number): number => Math.round(ms / 10) / 100
const round2 = (x: number): number => Math.round(x * 100) / 100

function reportScale(all: readonly { c: ScaleCase; results: ScaleResult[] }[]): void {
  const detail: Cell[][] = []
  for (const { c, results } of all)
    for (const r of results)
      detail.push([c.id, r.tool.id, seconds(r.ms), round2(r.clientCpuS), round2(r.serverCpuS), r.sent, r.received, mib(r.clientRss), mib(r.serverRss), r.failure === '' ? 'ok' : 'FAIL'])
  printTable(
    'Scale, per tool (medians): wall s of the client command; CPU s (user + sys) of the client and of the server for that run; bytes the client sent / received; peak RSS MiB',
    ['case', 'tool', 'wall s', 'CPU client', 'CPU server', 'sent', 'received', 'RSS client', 'RSS server', 'check'],
    detail,
    2,
  )
  const cpu = (r: ScaleResult): number => r.clientCpuS + r.serverCpuS
  const summary: Cell[][] = all.map(({ c, results }) => {
    const [a, az, fs, d] = ['rsync -a', 'rsync -az', 'rsync -a --fsync', 'dsync'].map((id) => results.find((r) => r.tool.id === id)!)
    return [c.id, seconds(a!.ms), seconds(az!.ms), seconds(fs!.ms), seconds(d!.ms), ratio(d!.ms, a!.ms), ratio(d!.ms, az!.ms), ratio(d!.ms, fs!.ms),
      round2(cpu(a!)), round2(cpu(az!)), round2(cpu(d!)), ratio(cpu(d!), cpu(a!)), ratio(cpu(d!), cpu(az!))]
  })
  printTable(
    'Scale summary: wall s and CPU s (client + server); ÷a, ÷az, ÷fsync = dsync ÷ rsync -a, -az, -a --fsync (issue 8 goal: wall ≤ 2 × rsync)',
    ['case', 'wall -a', 'wall -az', 'wall fsync', 'wall dsync', '÷a', '÷az', '÷fsync', 'CPU -a', 'CPU -az', 'CPU dsync', 'CPU ÷a', 'CPU ÷az'],
    summary,
    2,
  )
}
