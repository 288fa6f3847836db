import { posix } from 'node:path'
import type { StateEntry } from '../../net/index.js'
import { sameMtime } from '../../store/index.js'
import type { FileDigest } from '../../types.js'
import { conflictCopyPath } from '../conflict.js'
import { sameVersion } from './changes.js'

/** The two sides of a two-way sync: the client's tree is `local`, the server's `remote`. */
export type Side = 'local' | 'remote'

/** How a file changed on both sides is settled. `keep-both` (the default): the newer version
 *  keeps the name, the other becomes a conflict copy on both sides. The others overwrite. */
export type Prefer = 'keep-both' | 'local' | 'remote' | 'newer'

export interface ReconcileOptions {
  readonly prefer: Prefer
  /** false: a deletion on one side is not made on the other; the file comes back */
  readonly propagateDeletes: boolean
  /** machine names, for conflict copies: `NAME.dsync-conflict-MACHINE-YYYYMMDD-HHMMSS.EXT` */
  readonly machines: { readonly local: string; readonly remote: string }
  readonly now: Date
  /** each side's digests of files both sides changed (digestsNeeded), when they were read */
  readonly digests?: { readonly local: ReadonlyMap<string, FileDigest | undefined>; readonly remote: ReadonlyMap<string, FileDigest | undefined> }
}

/** What happens to one path, as the plan tells it (`-v`, `--dry-run`, `--json`). */
export interface Decision {
  readonly path: string
  readonly outcome:
    | 'send' // local → remote
    | 'receive' // remote → local
    | 'move' // a rename made on `from`'s side is made on the other side (`side`)
    | 'delete' // deleted on `side` (the other side deleted it)
    | 'conflict' // changed on both: both kept, `copy` holds the `side` version
    | 'resolved' // changed on both: --prefer chose, the other version is overwritten on `side`
    | 'kept' // deleted on one side, changed on the other: the changed file is kept (sent to `side`)
  /** where the action happens: the side written (or whose file becomes the conflict copy) */
  readonly side: Side
  readonly from?: string
  readonly copy?: string
  readonly why: string
}

/** A rename or a conflict copy, made on one side before the transfers. */
export interface Move {
  readonly from: string
  readonly to: string
  readonly conflict: boolean
}

/** Everything a sync does, per side. Paths sent are listed after the moves. */
export interface SyncPlan {
  readonly decisions: Decision[]
  /** paths the client sends (push phase) / receives (pull phase) */
  readonly toRemote: string[]
  readonly toLocal: string[]
  readonly moves: { readonly local: Move[]; readonly remote: Move[] }
  /** deleted after the transfers, deepest first (a deleted file may be a seed until then) */
  deletes: { local: string[]; remote: string[] }
  /** deleted before the transfers, deepest first: what a path of another kind replaces (a
   *  file where a directory was, a directory where a file or link was), and what was under it */
  readonly clears: { readonly local: string[]; readonly remote: string[] }
}

const other = (s: Side): Side => (s === 'local' ? 'remote' : 'local')
const exists = (e: StateEntry | undefined): e is StateEntry => e !== undefined && e.status !== 'deleted'
const changed = (e: StateEntry | undefined): boolean => e !== undefined && e.status !== 'same'

/**
 * The files whose digests the plan needs, per side (each side reads its own; the plan waits):
 *
 * - files both sides changed (or made) to the same size, unless both are new with the same
 *   mtime (the quick check): their digests tell "the same change" from a conflict. Two trees
 *   copied without their times (cp without -a) agree file by file this way, no false conflict;
 * - a rename that size and mtime alone leave ambiguous (several files deleted or made with
 *   them): the new file's digest, and that of the old path on the other side when it is as
 *   last synced, prove which old path it was.
 */
export function digestsNeeded(local: readonly StateEntry[], remote: readonly StateEntry[]): { local: string[]; remote: string[] } {
  const sides = { local: new Map(local.map((e) => [e.path, e])), remote: new Map(remote.map((e) => [e.path, e])) }
  const need = { local: new Set<string>(), remote: new Set<string>() }
  for (const l of local) {
    const r = sides.remote.get(l.path)
    if (!exists(l) || !exists(r) || l.kind !== 'file' || r.kind !== 'file' || !changed(l) || !changed(r)) continue
    if (l.digest !== undefined && r.digest !== undefined) continue
    if (l.size !== r.size) continue // different sizes: different content, no read needed
    // Same size and time on both sides: the same file by rsync's quick check when neither side
    // had it at the last sync (trees copied with cp -a). An edit on both sides since the last
    // sync is compared by content: two edits of one size within a millisecond are not the same.
    if (sameMtime(l.mtimeMs, r.mtimeMs) && l.status === 'new' && r.status === 'new') continue
    if (l.digest === undefined) need.local.add(l.path)
    if (r.digest === undefined) need.remote.add(l.path)
  }
  for (const s of ['local', 'remote'] as const) {
    for (const c of renameCandidates(sides[s], sides[other(s)])) {
      if (!c.unique) {
        for (const n of c.fresh) if (n.digest === undefined) need[s].add(n.path)
        for (const g of c.gone) {
          const theirs = sides[other(s)].get(g.path)
          if (theirs?.status === 'same' && theirs.digest === undefined) need[other(s)].add(g.path)
        }
      }
    }
  }
  return { local: [...need.local], remote: [...need.remote] }
}

/**
 * The two-way rule (the README's table; test/sync/two-way/reconcile.ts holds every cell).
 * Per path, with each side's change since the last sync between these two replicas:
 *
 * - changed on one side only → that side's version goes to the other (a new file, an edit, a
 *   mode, a deletion — unless `propagateDeletes` is off: then the file comes back);
 * - changed on both, to the same thing → nothing to do;
 * - deleted on one side, changed on the other → the changed file is kept (sent back);
 * - changed on both, differently → a conflict: both versions are kept, the newer under the
 *   name, the other as a conflict copy named with its machine and the time (or, with
 *   `prefer`, one version overwrites the other);
 * - a file renamed on one side (a new path with exactly the size and mtime, or the digest, of
 *   a path it deleted) whose old path the other side kept → renamed there too, with that
 *   side's edits if it made any: a rename and an edit meet instead of making a new file, a
 *   deleted one and a conflict.
 */
export function reconcile(local: readonly StateEntry[], remote: readonly StateEntry[], o: ReconcileOptions): SyncPlan {
  const sides = {
    local: new Map(local.map((e) => [e.path, withDigest(e, o.digests?.local)])),
    remote: new Map(remote.map((e) => [e.path, withDigest(e, o.digests?.remote)])),
  }
  const plan: SyncPlan = {
    decisions: [], toRemote: [], toLocal: [], moves: { local: [], remote: [] }, deletes: { local: [], remote: [] }, clears: { local: [], remote: [] },
  }
  const taken = new Set<string>([...sides.local.keys(), ...sides.remote.keys()])
  const done = new Set<string>()
  const send = (from: Side, path: string): void => {
    ;(from === 'local' ? plan.toRemote : plan.toLocal).push(path)
  }
  const decide = (d: Decision): void => {
    plan.decisions.push(d)
  }

  // Renames first: they settle two paths at once.
  for (const s of ['local', 'remote'] as const) {
    for (const r of findRenames(sides[s], sides[other(s)])) {
      const theirs = sides[other(s)].get(r.from)!
      plan.moves[other(s)].push({ from: r.from, to: r.to, conflict: false })
      decide({ path: r.to, outcome: 'move', side: other(s), from: r.from, why: `renamed on the ${s} side` })
      if (theirs.status === 'changed') {
        // Their edit follows the file to its new name.
        send(other(s), r.to)
        decide({ path: r.to, outcome: other(s) === 'local' ? 'send' : 'receive', side: s, why: `edited on the ${other(s)} side, renamed on the ${s} side` })
      }
      done.add(r.from).add(r.to)
    }
  }

  const paths = [...taken].filter((p) => !done.has(p)).sort()
  for (const path of paths) {
    const l = sides.local.get(path)
    const r = sides.remote.get(path)
    const lc = changed(l)
    const rc = changed(r)
    if (!lc && !rc) {
      // Both as last synced, or one side never had it (an interrupted sync recorded one side's
      // base only): the side that has it sends it, nothing is lost.
      if (exists(l) && r === undefined) oneWay('local', path, l, 'missing on the remote side')
      else if (exists(r) && l === undefined) oneWay('remote', path, r, 'missing on the local side')
      continue
    }
    if (lc && !rc) {
      oneSided('local', path, l!, r)
      continue
    }
    if (rc && !lc) {
      oneSided('remote', path, r!, l)
      continue
    }
    bothChanged(path, l!, r!)
  }

  function oneWay(from: Side, path: string, e: StateEntry, why: string): void {
    send(from, path)
    decide({ path, outcome: from === 'local' ? 'send' : 'receive', side: other(from), why: `${e.kind === 'dir' ? 'directory ' : ''}${why}` })
  }

  /** Changed on `from` only; `theirs` is the other side's entry: as last synced, or absent. */
  function oneSided(from: Side, path: string, mine: StateEntry, theirs: StateEntry | undefined): void {
    if (mine.status !== 'deleted') return oneWay(from, path, mine, mine.status === 'new' ? `new on the ${from} side` : `changed on the ${from} side`)
    if (!exists(theirs)) return // deleted here, gone there too
    if (!o.propagateDeletes) return oneWay(other(from), path, theirs, `deleted on the ${from} side; deletions are not propagated`)
    plan.deletes[other(from)].push(path)
    decide({ path, outcome: 'delete', side: other(from), why: `deleted on the ${from} side` })
  }

  function bothChanged(path: string, l: StateEntry, r: StateEntry): void {
    if (l.status === 'deleted' && r.status === 'deleted') return
    if (l.status === 'deleted' || r.status === 'deleted') {
      const deleter: Side = l.status === 'deleted' ? 'local' : 'remote'
      const kept = deleter === 'local' ? r : l
      if (o.prefer === deleter) {
        plan.deletes[other(deleter)].push(path)
        decide({ path, outcome: 'delete', side: other(deleter), why: `deleted on the ${deleter} side, changed on the other; --prefer ${deleter}` })
        return
      }
      send(other(deleter), path)
      decide({ path, outcome: 'kept', side: deleter, why: `deleted on the ${deleter} side but changed on the other: the changed ${kept.kind} is kept` })
      return
    }
    const newer: Side = l.mtimeMs > r.mtimeMs ? 'local' : 'remote'
    if (sameVersion(l, r, { mode: false })) {
      // Both made the same change but for the mode (chmod on both sides, a directory made on
      // both): left alone, each side would keep its own mode for good, each recorded as its
      // base. One mode is sent; identical content gets no conflict copy. (Found by a helper's
      // table test: the mode × mode cell with 755 against 600.)
      if (l.kind === 'symlink' || l.mode === r.mode) return
      const winner: Side = o.prefer === 'local' || o.prefer === 'remote' ? o.prefer : newer
      send(winner, path)
      decide({ path, outcome: 'resolved', side: other(winner), why: `the same ${l.kind} on both sides with other modes: the ${winner} mode wins` })
      return
    }
    // A directory keeps its name against a file or a link (the file becomes the copy): a
    // directory's contents are decided path by path.
    if (l.kind === 'dir' || r.kind === 'dir') {
      const loser: Side = l.kind === 'dir' ? 'remote' : 'local'
      return keepBoth(path, loser, `a directory on the ${other(loser)} side, a ${sides[loser].get(path)!.kind} on the ${loser} side`)
    }
    if (o.prefer === 'keep-both') return keepBoth(path, other(newer), 'changed on both sides')
    const winner: Side = o.prefer === 'newer' ? newer : o.prefer
    send(winner, path)
    decide({ path, outcome: 'resolved', side: other(winner), why: `changed on both sides; --prefer ${o.prefer}: the ${winner} version wins` })
  }

  /** The `loser` side's version becomes a conflict copy (moved there, then sent over); the
   *  winner's goes to the loser's side under the name. */
  function keepBoth(path: string, loser: Side, why: string): void {
    const copy = freeName(conflictCopyPath(path, o.now, o.machines[loser]), posix.extname(path), taken)
    taken.add(copy)
    plan.moves[loser].push({ from: path, to: copy, conflict: true })
    send(loser, copy)
    send(other(loser), path)
    decide({ path, outcome: 'conflict', side: loser, copy, why: `${why}: the ${loser} version is kept as ${copy}` })
  }

  // A path sent to a side that has it as another kind (a file made a directory, a link made a
  // file) replaces it: that side's entry goes first, with whatever was under it, before the
  // transfers — the receiver writes a path only where no entry of another kind stands. Only
  // entries the side has as last synced are cleared; one changed there too was a conflict above.
  for (const to of ['local', 'remote'] as const) {
    const incoming = to === 'local' ? plan.toLocal : plan.toRemote
    const from = other(to)
    for (const path of incoming) {
      const mine = sides[to].get(path)
      const theirs = sides[from].get(path)
      if (!exists(mine) || theirs === undefined || mine.kind === theirs.kind || mine.status !== 'same') continue
      const under = `${path}/`
      const moved = plan.deletes[to].filter((p) => p.startsWith(under))
      plan.deletes[to] = plan.deletes[to].filter((p) => !p.startsWith(under))
      plan.clears[to].push(...moved, path)
    }
  }
  for (const s of ['local', 'remote'] as const) {
    plan.deletes[s].sort((a, b) => (a < b ? 1 : -1)) // deepest first
    plan.clears[s].sort((a, b) => (a < b ? 1 : -1))
  }
  return plan
}

function withDigest(e: StateEntry, digests: ReadonlyMap<string, FileDigest | undefined> | undefined): StateEntry {
  const d = digests?.get(e.path)
  return d === undefined || e.digest !== undefined ? e : { ...e, digest: d }
}

/** `name`, or `name` with -2, -3… before `ext` (the extension of the file it is a copy of,
 *  which `name` ends with) when another path has it. Not `extname(name)`: for `Makefile` that
 *  is `.dsync-conflict-…`, and the -2 would land inside the name (`Makefile-2.dsync-conflict-…`;
 *  found by a helper's unit test). */
function freeName(name: string, ext: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name
  for (let i = 2; ; i++) {
    const candidate = `${name.slice(0, name.length - ext.length)}-${i}${ext}`
    if (!taken.has(candidate)) return candidate
  }
}

/** Files deleted on one side and files new there with the same size and mtime: renames, if
 *  the other side still has the old path. `unique`: one each way, so size and mtime decide. */
interface RenameCandidates {
  readonly gone: StateEntry[]
  readonly fresh: StateEntry[]
  readonly unique: boolean
}

function renameCandidates(mine: ReadonlyMap<string, StateEntry>, theirs: ReadonlyMap<string, StateEntry>): RenameCandidates[] {
  const key = (e: StateEntry): string => `${e.size}:${Math.round(e.mtimeMs)}`
  const groups = new Map<string, { gone: StateEntry[]; fresh: StateEntry[] }>()
  const group = (k: string) => groups.get(k) ?? groups.set(k, { gone: [], fresh: [] }).get(k)!
  for (const e of mine.values()) {
    if (e.kind !== 'file') continue
    const t = theirs.get(e.path)
    if (e.status === 'deleted' && exists(t) && t.kind === 'file') group(key(e)).gone.push(e)
    else if (e.status === 'new' && t === undefined) group(key(e)).fresh.push(e)
  }
  return [...groups.values()].filter((g) => g.gone.length > 0 && g.fresh.length > 0).map((g) => ({ ...g, unique: g.gone.length === 1 && g.fresh.length === 1 }))
}

/**
 * Renames made on one side (`mine`) whose old path the other side (`theirs`) still has, as
 * last synced or edited, and whose new path it has never had. A rename is a file deleted here
 * (its base) and a new file here with the same content: the same size and mtime (mv, git mv
 * and file managers keep the mtime), proven by digests when several files share them — the new
 * file's digest equals the old one's base, or the other side's unchanged copy of it. What stays
 * ambiguous is left to the path rules (a new file and a deletion: nothing lost, more bytes).
 */
function findRenames(mine: ReadonlyMap<string, StateEntry>, theirs: ReadonlyMap<string, StateEntry>): { from: string; to: string }[] {
  const out: { from: string; to: string }[] = []
  for (const c of renameCandidates(mine, theirs)) {
    if (c.unique) {
      const [g, n] = [c.gone[0]!, c.fresh[0]!]
      if (g.digest === undefined || n.digest === undefined || g.digest === n.digest) out.push({ from: g.path, to: n.path })
      continue
    }
    const used = new Set<string>()
    for (const g of c.gone) {
      const there = theirs.get(g.path)!
      const was = g.digest ?? (there.status === 'same' ? there.digest : undefined)
      if (was === undefined) continue
      const proven = c.fresh.filter((n) => !used.has(n.path) && n.digest === was)
      if (proven.length === 0) continue
      // Copies of one content: the same base name first, else the first in path order.
      const pick = proven.find((n) => posix.basename(n.path) === posix.basename(g.path)) ?? proven[0]!
      used.add(pick.path)
      out.push({ from: g.path, to: pick.path })
    }
  }
  return out
}
