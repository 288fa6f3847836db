import { hostname } from 'node:os'
import { DsyncError } from '../../errors.js'
import type { Channel, SyncOp } from '../../net/index.js'
import { newReplicaId } from '../../store/index.js'
import { runReceiver } from '../receiver.js'
import { runSender } from '../sender.js'
import { SessionScope } from '../session-scope.js'
import { machineName } from '../conflict.js'
import type { FileEvent } from '../report.js'
import { sideState } from './changes.js'
import { phaseChannel, readUntil } from './phase-channel.js'
import { SYNC_BATCH, unsurePaths, walkSide, type SideDeps } from './side.js'
import { TreeOps } from './tree-ops.js'

/**
 * The server's half of `dsync sync` (PROTOCOL.md §4.2): it sends its tree's state against the
 * pair bases of the client's replica, answers digest requests, then does what the client's
 * plan asks of it — moves, the receiving phase, the sending phase, deletions — each checked
 * against what it listed, and records its new bases. A client that ends the session after the
 * state (a dry run, or one that went away) leaves everything as it was.
 */
export async function runSyncServer(channel: Channel, replica: string | undefined, deps: SideDeps): Promise<void> {
  // One lifetime for the walk, both phases and the moves: see SessionScope.
  const scope = new SessionScope(deps.signal)
  try {
    await syncServer(channel, replica, { ...deps, signal: scope.signal })
  } catch (err) {
    scope.abort(err)
    throw err
  }
}

async function syncServer(channel: Channel, replica: string | undefined, d: SideDeps): Promise<void> {
  if (replica === undefined) throw new DsyncError('BAD_MESSAGE', "a sync session needs the client's replica id (options.replica)")
  const files = await walkSide(d)
  const pairs = d.store.pairBases()
  const old = pairs.load(replica)
  const state = sideState(files.entries(), old, (p) => files.known(p)?.digest)
  for (let i = 0; i < state.length; i += SYNC_BATCH) await channel.send({ t: 'state', entries: state.slice(i, i + SYNC_BATCH) })
  // A dry run writes no state, not even this tree's replica id: a throwaway one stands in.
  const own = d.options.dryRun ? (pairs.peekReplicaId() ?? newReplicaId()) : await pairs.replicaId()
  await channel.send({ t: 'stateEnd', replica: own, machine: machineName(hostname()) })

  // A plan names each path at most a few times (a move, a send, a delete): more is not a plan.
  const maxOps = 3 * state.length + SYNC_BATCH
  const ops: SyncOp[] = []
  let planned = false
  for await (const m of channel.messages()) {
    if (m.t === 'digests' && m.digests === undefined) {
      // Read as LocalFiles reads: a few at once (its semaphore), not one after the other.
      const digests = await Promise.all(m.paths.map(async (p) => (files.get(p)?.kind === 'file' ? (await files.record(p))?.digest : undefined)))
      await channel.send({ t: 'digests', paths: m.paths, digests })
    } else if (m.t === 'ops') {
      if (ops.length + m.ops.length > maxOps) throw new DsyncError('BAD_MESSAGE', `more than ${maxOps} operations for a tree of ${state.length} paths`)
      ops.push(...m.ops)
    } else if (m.t === 'step' && m.name === 'opsEnd') {
      planned = true
      break
    } else if (m.t !== 'notice') {
      throw new DsyncError('BAD_MESSAGE', `unexpected "${m.t}" message from the client before its plan`)
    }
  }
  if (!planned) return // the client looked and left: a dry run
  if (d.options.dryRun) throw new DsyncError('BAD_MESSAGE', 'a dry-run session sent a plan to carry out')

  const tell = (e: FileEvent): void => {
    d.report.add(e)
    channel.send({
      t: 'result', id: 0, path: e.path, action: e.action, ok: e.action !== 'error' && e.action !== 'kept',
      ...(e.code !== undefined && { code: e.code }), ...(e.message !== undefined && { message: e.message }), ...(e.seed !== undefined && { seed: e.seed }),
    }).catch(() => {
      // Policy: a client gone now is noticed by the next read of the session.
    })
  }
  const tree = new TreeOps(d.root, files, state, tell)
  await tree.move(ops.flatMap((o) => (o.op === 'move' || o.op === 'conflictCopy' ? [{ from: o.path, to: o.to, conflict: o.op === 'conflictCopy' }] : [])))
  await tree.delete(ops.flatMap((o) => (o.op === 'clear' ? [o.path] : [])).sort((a, b) => (a < b ? 1 : -1)))
  await channel.send({ t: 'step', name: 'opsApplied' })

  const roleOptions = { ...d.options, delete: false, force: false }
  await runReceiver(phaseChannel(channel, (e) => tree.received(e)), {
    root: d.root, store: d.store, params: d.params, options: roleOptions, ...(d.version !== undefined && { version: d.version }), report: d.report, signal: d.signal, now: d.now,
    files, baseOf: (p) => tree.expected(p),
  })
  await runSender(phaseChannel(channel), {
    root: d.root, store: d.store, params: d.params, options: roleOptions, ...(d.version !== undefined && { version: d.version }), report: d.report, signal: d.signal,
    files, only: new Set(ops.flatMap((o) => (o.op === 'send' ? [o.path] : []))),
  })
  await channel.send({ t: 'step', name: 'phaseEnd' })

  await readUntil(channel, 'ending the sync', (m) => {
    if (m.t === 'step' && m.name === 'syncEnd') return true
    throw new DsyncError('BAD_MESSAGE', `unexpected "${m.t}" message from the client at the end of the sync`)
  })
  const deletes = ops.flatMap((o) => (o.op === 'delete' ? [o.path] : [])).sort((a, b) => (a < b ? 1 : -1))
  await tree.delete(deletes)
  for (const p of unsurePaths(d.report.events)) tree.unsure(p)
  await files.flush()
  await pairs.update(replica, tree.bases(old))
  await channel.send({ t: 'step', name: 'syncDone' })
}
