import { DsyncError } from '../../errors.js'
import type { Channel, Message, StateEntry, SyncOp } from '../../net/index.js'
import type { FileDigest } from '../../types.js'
import { runReceiver } from '../receiver.js'
import { runSender } from '../sender.js'
import { SessionScope } from '../session-scope.js'
import { sideState } from './changes.js'
import { phaseChannel, readUntil } from './phase-channel.js'
import { digestsNeeded, reconcile, type Decision, type Prefer, type SyncPlan } from './reconcile.js'
import { eventOfResult, SideReport, SYNC_BATCH, unsurePaths, walkSide, type SideDeps } from './side.js'
import { TreeOps } from './tree-ops.js'

export interface SyncClientDeps extends SideDeps {
  readonly prefer: Prefer
  readonly propagateDeletes: boolean
  /** this machine's name, for the conflict copies of its versions */
  readonly machine: string
  readonly onNotice?: (message: string) => void
}

/** Paths of a served tree the client holds the state of (~200 bytes each: ~800 MiB at most):
 *  a peer cannot grow this side's memory past it by sending state forever. */
const MAX_STATE_ENTRIES = 4 * 1024 * 1024

const unexpected = (m: Message, when: string): DsyncError => new DsyncError('BAD_MESSAGE', `unexpected "${m.t}" message from the server ${when}`)

/**
 * The client's half of `dsync sync` (PROTOCOL.md §4.2). It makes the plan: it reads the
 * server's tree state, compares it with its own (both against the pair bases of the last sync
 * between these two replicas), and asks for digests where sizes or times cannot decide. Then
 * it tells the server its part, makes its own moves, sends (push phase), receives (pull
 * phase), and after the server's deletions makes its own and records the new bases. A dry run
 * stops after the plan. Returns the plan; the report has every event, tagged with its side.
 */
export async function runSyncClient(channel: Channel, deps: SyncClientDeps): Promise<SyncPlan> {
  // One lifetime for the walk, both phases and the moves: see SessionScope.
  const scope = new SessionScope(deps.signal)
  try {
    return await syncClient(channel, { ...deps, signal: scope.signal })
  } catch (err) {
    scope.abort(err)
    throw err
  }
}

async function syncClient(channel: Channel, d: SyncClientDeps): Promise<SyncPlan> {
  const files = await walkSide(d)
  const remote: StateEntry[] = []
  let peer: { replica: string; machine: string } | undefined
  await readUntil(channel, 'sending its tree', (m) => {
    if (m.t === 'state') {
      if (remote.length + m.entries.length > MAX_STATE_ENTRIES) throw new DsyncError('BAD_MESSAGE', `the server's tree state passed ${MAX_STATE_ENTRIES} entries`)
      for (const e of m.entries) remote.push(e)
    }
    else if (m.t === 'stateEnd') peer = { replica: m.replica, machine: m.machine }
    else throw unexpected(m, 'before its tree state')
    return peer !== undefined
  }, d.onNotice)
  const pairs = d.store.pairBases()
  const old = pairs.load(peer!.replica)
  const local = sideState(files.entries(), old, (p) => files.known(p)?.digest)

  // Digests where size and mtime cannot tell "the same change on both sides" from a conflict.
  const need = digestsNeeded(local, remote)
  const digests = { local: new Map<string, FileDigest | undefined>(), remote: new Map<string, FileDigest | undefined>() }
  for (let i = 0; i < need.remote.length; i += SYNC_BATCH) await channel.send({ t: 'digests', paths: need.remote.slice(i, i + SYNC_BATCH) })
  const ours = Promise.all(need.local.map(async (p) => digests.local.set(p, (await files.record(p))?.digest)))
  if (need.remote.length > 0) {
    let answered = 0
    await readUntil(channel, 'sending the digests', (m) => {
      if (m.t !== 'digests' || m.digests === undefined) throw unexpected(m, 'while waiting for digests')
      m.paths.forEach((p, i) => digests.remote.set(p, m.digests![i]))
      answered += m.paths.length
      return answered >= need.remote.length
    }, d.onNotice)
  }
  await ours

  const plan = reconcile(local, remote, {
    prefer: d.prefer, propagateDeletes: d.propagateDeletes, machines: { local: d.machine, remote: peer!.machine }, now: d.now(), digests,
  })
  if (d.options.dryRun) return plan

  const ops: SyncOp[] = [
    ...plan.moves.remote.map((m): SyncOp => (m.conflict ? { op: 'conflictCopy', path: m.from, to: m.to } : { op: 'move', path: m.from, to: m.to })),
    ...plan.toLocal.map((path): SyncOp => ({ op: 'send', path })),
    ...plan.deletes.remote.map((path): SyncOp => ({ op: 'delete', path })),
    ...plan.clears.remote.map((path): SyncOp => ({ op: 'clear', path })),
  ]
  for (let i = 0; i < ops.length; i += SYNC_BATCH) await channel.send({ t: 'ops', ops: ops.slice(i, i + SYNC_BATCH) })
  await channel.send({ t: 'step', name: 'opsEnd' })
  for (const dec of plan.decisions) reportDecision(d, dec)

  const tree = new TreeOps(d.root, files, local, (e) => d.report.add({ ...e, side: 'local' }))
  await tree.move(plan.moves.local)
  await tree.delete(plan.clears.local)
  const remoteResult = (m: Message): boolean => {
    if (m.t !== 'result') return false
    d.report.add({ ...eventOfResult(m), side: 'remote' })
    return true
  }
  await readUntil(channel, 'making its moves', (m) => {
    if (remoteResult(m)) return false
    if (m.t === 'step' && m.name === 'opsApplied') return true
    throw unexpected(m, 'while it made its moves')
  }, d.onNotice)

  // Push phase: this side sends what the plan says, the server receives.
  const roleOptions = { ...d.options, delete: false, force: false }
  await runSender(phaseChannel(channel), {
    root: d.root, store: d.store, params: d.params, options: roleOptions, ...(d.version !== undefined && { version: d.version }), report: new SideReport(d.report, 'remote'), signal: d.signal,
    files, only: new Set(plan.toRemote), ...(d.onNotice && { onNotice: d.onNotice }),
  })
  await channel.send({ t: 'step', name: 'phaseEnd' })
  // Pull phase: the server sends, this side receives.
  await runReceiver(phaseChannel(channel, (e) => tree.received(e)), {
    root: d.root, store: d.store, params: d.params, options: roleOptions, ...(d.version !== undefined && { version: d.version }), report: new SideReport(d.report, 'local'), signal: d.signal,
    now: d.now, files, baseOf: (p) => tree.expected(p), ...(d.onNotice && { onNotice: d.onNotice }),
  })

  await channel.send({ t: 'step', name: 'syncEnd' })
  await readUntil(channel, 'finishing the sync', (m) => {
    if (remoteResult(m)) return false
    if (m.t === 'step' && m.name === 'syncDone') return true
    throw unexpected(m, 'at the end of the sync')
  }, d.onNotice)
  await tree.delete(plan.deletes.local)
  for (const p of unsurePaths(d.report.events)) tree.unsure(p)
  await files.flush()
  await pairs.update(peer!.replica, tree.bases(old))
  d.report.countScan(files.filesRead)
  return plan
}

/** Conflicts and kept files are told when the plan is made: they are decisions, not transfers. */
function reportDecision(d: SyncClientDeps, dec: Decision): void {
  if (dec.outcome === 'conflict') {
    d.report.add({ path: dec.path, action: 'conflict', side: dec.side, conflictCopy: dec.copy!, message: dec.why })
  } else if (dec.outcome === 'kept') {
    d.report.add({ path: dec.path, action: 'conflict', side: dec.side, message: dec.why })
  }
}
