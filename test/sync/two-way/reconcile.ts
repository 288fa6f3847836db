import t from 'tap'
import type { StateEntry } from '../../../src/net/index.js'
import { digestsNeeded, reconcile, sideState, type ReconcileOptions } from '../../../src/sync/index.js'
import type { FileDigest } from '../../../src/types.js'

const D = (c: string) => c.repeat(64) as FileDigest
const f = (path: string, status: StateEntry['status'], o: Partial<StateEntry> = {}): StateEntry =>
  ({ path, kind: 'file', size: 100, mtimeMs: 1000, mode: 0o644, status, ...o })
const opts = (o: Partial<ReconcileOptions> = {}): ReconcileOptions =>
  ({ prefer: 'keep-both', propagateDeletes: true, machines: { local: 'home', remote: 'work' }, now: new Date('2026-11-24T00:00:00Z'), ...o })

t.test('sideState: same, changed (content or mode), new, deleted', async (t) => {
  const bases = new Map([
    ['same.txt', { kind: 'file' as const, size: 1, mtimeMs: 5, mode: 0o644 }],
    ['edited.txt', { kind: 'file' as const, size: 1, mtimeMs: 5, mode: 0o644 }],
    ['chmod.txt', { kind: 'file' as const, size: 1, mtimeMs: 5, mode: 0o644 }],
    ['gone.txt', { kind: 'file' as const, size: 1, mtimeMs: 5, mode: 0o644, digest: D('a') }],
  ])
  const e = (path: string, o: object = {}) => ({ path, kind: 'file' as const, size: 1, mtimeMs: 5, mode: 0o644, ...o })
  const st = sideState([e('same.txt', { mtimeMs: 5.4 }), e('edited.txt', { mtimeMs: 9 }), e('chmod.txt', { mode: 0o600 }), e('new.txt')], bases, () => D('b'))
  const status = Object.fromEntries(st.map((s) => [s.path, s.status]))
  t.same(status, { 'same.txt': 'same', 'edited.txt': 'changed', 'chmod.txt': 'changed', 'new.txt': 'new', 'gone.txt': 'deleted' })
  t.equal(st.find((s) => s.path === 'same.txt')!.digest, undefined, 'an unchanged file carries no digest (no-op bytes)')
  t.equal(st.find((s) => s.path === 'new.txt')!.digest, D('b'), 'a changed one does')
  t.equal(st.find((s) => s.path === 'gone.txt')!.digest, D('a'), 'a deleted one carries its base')
})

t.test('digestsNeeded: same-size edits on both sides, not first-sync quick-check matches', async (t) => {
  const n = digestsNeeded(
    [f('both-edited', 'changed', { mtimeMs: 5 }), f('both-new-same-time', 'new'), f('both-new-other-time', 'new', { mtimeMs: 7 }), f('sizes-differ', 'changed', { size: 3 }), f('one-side', 'changed')],
    [f('both-edited', 'changed', { mtimeMs: 5 }), f('both-new-same-time', 'new'), f('both-new-other-time', 'new'), f('sizes-differ', 'changed'), f('one-side', 'same')],
  )
  t.same(n.local.sort(), ['both-edited', 'both-new-other-time'])
  t.same(n.remote.sort(), ['both-edited', 'both-new-other-time'])
})

t.test('renames: unique by size and mtime; ambiguous ones proven by digest or left alone', async (t) => {
  const unique = reconcile([f('old.txt', 'deleted'), f('new-name.txt', 'new')], [f('old.txt', 'same')], opts())
  t.same(unique.moves.remote, [{ from: 'old.txt', to: 'new-name.txt', conflict: false }], 'a rename is made on the other side as a move')
  t.same(unique.toRemote, [], 'no data')

  const local = [f('a.txt', 'deleted'), f('b.txt', 'deleted'), f('x/moved.txt', 'new'), f('x/other.txt', 'new')]
  const remote = [f('a.txt', 'same'), f('b.txt', 'same')]
  const need = digestsNeeded(local, remote)
  t.same(need.local.sort(), ['x/moved.txt', 'x/other.txt'], 'the new files are read here')
  t.same(need.remote.sort(), ['a.txt', 'b.txt'], 'the old paths there')
  const unproven = reconcile(local, remote, opts())
  t.same(unproven.moves.remote, [], 'without digests nothing is paired')
  t.same(unproven.toRemote.sort(), ['x/moved.txt', 'x/other.txt'], 'the new files are sent')
  t.same(unproven.deletes.remote, ['b.txt', 'a.txt'], 'and the old ones deleted there, deepest (last) first')
  const digests = { local: new Map([['x/moved.txt', D('b')], ['x/other.txt', D('a')]]), remote: new Map([['a.txt', D('a')], ['b.txt', D('b')]]) }
  const proven = reconcile(local, remote, opts({ digests }))
  t.same(proven.moves.remote.map((m) => [m.from, m.to]).sort(), [['a.txt', 'x/other.txt'], ['b.txt', 'x/moved.txt']], 'digests pair each file with its old path')
  t.same(proven.toRemote, [], 'no data')

  const edited = reconcile([f('old.txt', 'deleted'), f('new-name.txt', 'new')], [f('old.txt', 'changed', { mtimeMs: 3000 })], opts())
  t.same(edited.moves.remote, [{ from: 'old.txt', to: 'new-name.txt', conflict: false }], 'an edit on the other side follows the rename')
  t.same(edited.toLocal, ['new-name.txt'], 'and comes back under the new name')
})

t.test('conflicts: keep both by default (the newer keeps the name), or --prefer', async (t) => {
  const l = [f('p.txt', 'changed', { mtimeMs: 2000, size: 5 })]
  const r = [f('p.txt', 'changed', { mtimeMs: 3000, size: 6 })]
  const both = reconcile(l, r, opts())
  t.equal(both.moves.local.length, 1, 'the older (local) version is moved aside here')
  t.match(both.moves.local[0]!.to, /^p\.dsync-conflict-home-20261124-000000\.txt$/)
  t.same(both.toRemote, [both.moves.local[0]!.to], 'its copy goes to the other side')
  t.same(both.toLocal, ['p.txt'], 'and the newer comes here')
  t.same(reconcile(l, r, opts({ prefer: 'local' })).toRemote, ['p.txt'], '--prefer local overwrites the remote')
  t.same(reconcile(l, r, opts({ prefer: 'newer' })).toLocal, ['p.txt'], '--prefer newer takes the remote one')
  const taken = reconcile(l, [...r, f('p.dsync-conflict-home-20261124-000000.txt', 'same')], opts())
  t.equal(taken.moves.local[0]!.to, 'p.dsync-conflict-home-20261124-000000-2.txt', 'a copy name in use gets a -2')

  const delEdit = reconcile([f('q', 'deleted')], [f('q', 'changed', { mtimeMs: 9 })], opts())
  t.same(delEdit.toLocal, ['q'], 'deleted here, edited there: the edit is kept and comes back')
  t.equal(delEdit.decisions[0]!.outcome, 'kept')
  t.same(reconcile([f('q', 'deleted')], [f('q', 'changed')], opts({ prefer: 'local' })).deletes.remote, ['q'], 'unless --prefer says the deletion wins')
  t.same(reconcile([f('q', 'deleted')], [f('q', 'same')], opts({ propagateDeletes: false })).toLocal, ['q'], '--no-delete: a deleted file comes back')
})

t.test('a directory keeps its name against a file; the file becomes the conflict copy', async (t) => {
  const p = reconcile([f('d', 'new')], [{ path: 'd', kind: 'dir', size: 0, mtimeMs: 1, mode: 0o755, status: 'new' }], opts())
  t.equal(p.moves.local.length, 1)
  t.equal(p.moves.local[0]!.from, 'd')
  t.same(p.toLocal, ['d'])
})

t.test('the same content with other modes on both sides: one mode is sent, so the sides meet', async (t) => {
  // chmod on both sides: the same size and mtime, other modes.
  const p = reconcile([f('x', 'changed', { mode: 0o755 })], [f('x', 'changed', { mode: 0o600 })], opts())
  t.same(p.toLocal, ['x'], 'one side\'s mode goes over (the remote\'s on a tie of mtimes)')
  t.equal(p.decisions[0]!.outcome, 'resolved')
  t.same(p.moves, { local: [], remote: [] }, 'no conflict copy for identical content')
  const same = reconcile([f('x', 'changed', { mode: 0o600 })], [f('x', 'changed', { mode: 0o600 })], opts())
  t.same([same.toLocal, same.toRemote], [[], []], 'the same mode too: nothing to do')
  t.same(reconcile([f('x', 'changed', { mode: 0o755 })], [f('x', 'changed', { mode: 0o600 })], opts({ prefer: 'local' })).toRemote, ['x'], '--prefer picks the mode')
})

t.test('a taken conflict-copy name of a file without an extension gets -2 at its end', async (t) => {
  const l = [f('Makefile', 'changed', { mtimeMs: 2000, size: 5 })]
  const r = [f('Makefile', 'changed', { mtimeMs: 3000, size: 6 }), f('Makefile.dsync-conflict-home-20261124-000000', 'same')]
  t.equal(reconcile(l, r, opts()).moves.local[0]!.to, 'Makefile.dsync-conflict-home-20261124-000000-2')
})
