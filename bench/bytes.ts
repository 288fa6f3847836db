/**
 * Bytes on the wire per class of change (issue 11): dsync push against `rsync -az` into a real
 * daemon (both on 127.0.0.1, both ways counted: rsync's --stats totals, dsync's summary), and
 * against the told-basis delta tools (xdelta3, `zstd --patch-from`) handed each changed file's
 * real basis — a bound dsync cannot reach, since it must find the basis itself. New files with
 * no basis: `zstd -19` of the file alone. Bytes are deterministic: one run.
 *
 * `npm run bench -- bytes [--big] [--class NAME] [--dsync-only]`: --big adds the 1 GiB class.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bytesClasses, type BytesClass } from './support/bytes-data.js'
import { ensurePeers, xdelta3, zstdPatch } from './support/delta-peers.js'
import { writeTrees } from './support/sync-data.js'
import { dsyncPush, materialize, removeTree, rsyncPush, startDsyncServer, startRsyncDaemon, treeDiff, type Daemon, type SyncRun } from './support/sync-tools.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'

interface Row {
  readonly c: BytesClass
  readonly dsync: SyncRun
  readonly rsync: SyncRun | null
  readonly xdelta: number
  readonly zstd: number
  readonly check: string
}

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** before (unmeasured sync) → after (measured sync); the receiver must then equal the sender. */
async function syncOnce(push: (src: string, url: string) => Promise<SyncRun>, trees: { before: string; after: string }, send: string, recv: string, url: string): Promise<{ run: SyncRun; check: string }> {
  await mkdir(send, { recursive: true })
  await materialize(trees.before, send)
  const first = await push(send, url)
  await materialize(trees.after, send)
  const run = await push(send, url)
  const diff = await treeDiff(send, recv)
  const check = first.error || run.error || (diff === '' ? 'ok' : `receiver != sender: ${diff}`)
  await removeTree(send)
  await removeTree(recv)
  return { run, check }
}

/** Told-basis bytes of every changed or new file: xdelta3 and zstd --patch-from (or zstd -19 alone). */
async function toldBasis(basis: ReadonlyMap<string, string | null>, trees: { before: string; after: string }, dir: string, tools: Set<string>): Promise<{ xdelta: number; zstd: number }> {
  let xd = 0
  let zs = 0
  await mkdir(dir, { recursive: true })
  for (const [to, from] of basis) {
    const target = join(trees.after, to)
    if (from === null) {
      execFileSync('zstd', ['-q', '-f', '-19', target, '-o', join(dir, 'alone.zst')])
      const n = (await stat(join(dir, 'alone.zst'))).size
      xd += n
      zs += n
      continue
    }
    const seed = join(trees.before, from)
    if (tools.has('xdelta3')) xd += (await xdelta3(seed, target, join(dir, 'out'), dir)).deltaBytes
    zs += (await zstdPatch(seed, target, join(dir, 'out'), dir)).deltaBytes
  }
  return { xdelta: tools.has('xdelta3') ? xd : Number.NaN, zstd: zs }
}

export async function run(): Promise<void> {
  const tools = ensurePeers()
  const only = arg('--class')
  const dsyncOnly = process.argv.includes('--dsync-only')
  const classes = bytesClasses(process.argv.includes('--big')).filter((c) => only === undefined || c.name === only)
  const tmp = await mkdtemp(join(tmpdir(), 'dsync-bench-bytes-'))
  const roots = { rsync: join(tmp, 'srv-rsync'), dsync: join(tmp, 'srv-dsync') }
  await mkdir(roots.rsync)
  await mkdir(roots.dsync)
  printEnvironment()
  console.log(`dsync ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: new URL('../..', import.meta.url) }).toString().trim()}; ${execFileSync('rsync', ['--version']).toString().split('\n')[0]}`)
  let rsyncd: Daemon | undefined
  let dsyncd: Daemon | undefined
  const rows: Row[] = []
  try {
    rsyncd = dsyncOnly ? undefined : await startRsyncDaemon(tmp, roots.rsync)
    dsyncd = await startDsyncServer(roots.dsync)
    for (const [i, c] of classes.entries()) {
      const id = `c${i}`
      const { before, after, basis } = c.make()
      const trees = await writeTrees(join(tmp, 'gen', id), before, after)
      const d = await syncOnce((s, u) => dsyncPush(s, u, c.dsyncArgs), trees, join(tmp, 'send', `${id}-d`), join(roots.dsync, id), `${dsyncd.url}/${id}`)
      const r = rsyncd === undefined ? null : await syncOnce((s, u) => rsyncPush(['-az', '--no-whole-file'], s, u), trees, join(tmp, 'send', `${id}-r`), join(roots.rsync, id), `${rsyncd.url}/${id}`)
      const told = dsyncOnly ? { xdelta: Number.NaN, zstd: Number.NaN } : await toldBasis(basis, trees, join(tmp, 'told', id), tools)
      await removeTree(join(tmp, 'gen', id))
      rows.push({ c, dsync: d.run, rsync: r?.run ?? null, ...told, check: d.check === 'ok' && (r === null || r.check === 'ok') ? 'ok' : `FAIL ${d.check} ${r?.check ?? ''}` })
      console.log(`  done: ${c.name}: dsync ${d.run.sent + d.run.received} B (${JSON.stringify(d.run.actions)})`)
    }
  } finally {
    await dsyncd?.stop()
    await rsyncd?.stop()
    await removeTree(tmp)
  }
  const total = (r: SyncRun | null): number => (r === null ? Number.NaN : r.sent + r.received)
  // Two decimals, or four near 1, where "over or under" is the question (1.0023 is not 1).
  const ratio = (x: number, y: number): Cell => {
    const r = x / y
    if (!Number.isFinite(r)) return '-'
    return r.toFixed(Math.abs(r - 1) < 0.005 && r !== 1 ? 4 : 2).padStart(7)
  }
  const num = (x: number): Cell => (Number.isFinite(x) ? x : '-')
  printTable(
    'Bytes on the wire, both ways (dsync ÷ rsync -az < 1: dsync sends less; told = min(xdelta3, zstd --patch-from) with the right basis)',
    ['class', 'dsync sent', 'dsync recv', 'dsync', 'rsync -az', '÷ rsync', 'xdelta3', 'zstd patch', 'told', '÷ told', 'check'],
    rows.map((r) => {
      const told = Math.min(r.xdelta, r.zstd)
      const best = Number.isFinite(told) ? told : r.zstd
      return [r.c.name, r.dsync.sent, r.dsync.received, total(r.dsync), num(total(r.rsync)), ratio(total(r.dsync), total(r.rsync)), num(r.xdelta), num(r.zstd), num(best), ratio(total(r.dsync), best), r.check]
    }),
    2,
  )
  for (const c of classes) console.log(`  ${c.name.padEnd(17)} ${c.what}`)
}
