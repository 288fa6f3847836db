import t from 'tap'
import fc from 'fast-check'
import { open, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { stableUtime } from '../../src/fs/index.js'
import type { TreeEntry } from '../../src/fs/index.js'
import { TreeSummary, sameSummary } from '../../src/sync/tree-summary.js'
import { tempTree } from '../support/temp.js'

// Directory summaries (PROTOCOL.md §4.9): a summary is equal exactly when what a listing would
// show under the directory is equal to the quick check.

const hex = (b: Uint8Array | undefined): string => Buffer.from(b ?? []).toString('hex')

/** A random tree: directories d0..d3 (nested as drawn), files and symlinks in them. */
const treeArb = fc
  .record({
    dirs: fc.array(fc.record({ parent: fc.nat(3), mode: fc.constantFrom(0o755, 0o700) }), { minLength: 1, maxLength: 4 }),
    leaves: fc.array(
      fc.record({
        dir: fc.nat(4),
        name: fc.stringMatching(/^[a-z]{1,3}$/),
        kind: fc.constantFrom('file', 'file', 'symlink'),
        size: fc.nat(1_000_000),
        mtimeMs: fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }).map((ms) => ms + 0.25),
        mode: fc.constantFrom(0o644, 0o600, 0o755),
        target: fc.stringMatching(/^[a-z]{1,4}$/),
      }),
      { minLength: 1, maxLength: 30 },
    ),
  })
  .map(({ dirs, leaves }) => {
    const dirPaths: string[] = ['']
    const entries: TreeEntry[] = []
    dirs.forEach((d, i) => {
      const parent = dirPaths[Math.min(d.parent, dirPaths.length - 1)]!
      const path = parent === '' ? `d${i}` : `${parent}/d${i}`
      dirPaths.push(path)
      entries.push({ path, kind: 'dir', size: 0, mtimeMs: 1_700_000_000_000 + i, mode: d.mode })
    })
    const seen = new Set(entries.map((e) => e.path))
    for (const l of leaves) {
      const dir = dirPaths[Math.min(l.dir, dirPaths.length - 1)]!
      const path = dir === '' ? `f-${l.name}` : `${dir}/f-${l.name}`
      if (seen.has(path)) continue
      seen.add(path)
      entries.push(l.kind === 'file'
        ? { path, kind: 'file', size: l.size, mtimeMs: l.mtimeMs, mode: l.mode }
        : { path, kind: 'symlink', size: 0, mtimeMs: l.mtimeMs, mode: 0o777, target: l.target })
    }
    return entries
  })

/** The directories above `path`, the root included. */
function ancestors(path: string): string[] {
  const out = ['']
  const parts = path.split('/')
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join('/'))
  return out
}

t.test('a summary does not depend on the order entries come in', async () => {
  fc.assert(fc.property(treeArb, fc.nat(), (entries, seed) => {
    const shuffled = [...entries].sort((a, b) => ((a.path.length * 7919 + seed) % 13) - ((b.path.length * 7919 + seed) % 13))
    return sameSummary(TreeSummary.of(entries).hash('')!, TreeSummary.of(shuffled).hash('')!)
  }))
})

t.test('any change a listing would show changes the summary of every directory above it, and only those', async () => {
  fc.assert(fc.property(treeArb, fc.nat(), fc.constantFrom('size', 'time', 'mode', 'target', 'gone', 'renamed', 'added'), (entries, pick, change) => {
    const i = pick % entries.length
    const e = entries[i]!
    const changed = [...entries]
    if (change === 'gone') {
      if (e.kind === 'dir') return true // its contents would go too: covered by the files'
      changed.splice(i, 1)
    } else if (change === 'renamed') {
      if (e.kind === 'dir') return true
      changed[i] = { ...e, path: `${e.path}-x` }
    } else if (change === 'added') {
      const dir = e.kind === 'dir' ? e.path : e.path.slice(0, Math.max(0, e.path.lastIndexOf('/')))
      changed.push({ path: dir === '' ? 'new-file' : `${dir}/new-file`, kind: 'file', size: 1, mtimeMs: 1, mode: 0o644 })
    } else if (e.kind === 'file' && change !== 'target') {
      changed[i] = { ...e, ...(change === 'size' && { size: e.size + 1 }), ...(change === 'time' && { mtimeMs: e.mtimeMs + 1 }), ...(change === 'mode' && { mode: e.mode ^ 0o100 }) }
    } else if (e.kind === 'symlink' && change === 'target') {
      changed[i] = { ...e, target: `${e.target}x` }
    } else if (e.kind === 'dir' && change === 'mode') {
      changed[i] = { ...e, mode: e.mode ^ 0o050 }
    } else if (e.kind === 'dir' && change === 'time') {
      changed[i] = { ...e, mtimeMs: e.mtimeMs + 1 }
    } else return true // no such change of this kind of entry
    const before = TreeSummary.of(entries)
    const after = TreeSummary.of(changed)
    const where = change === 'added' ? `${e.kind === 'dir' ? e.path : e.path.slice(0, Math.max(0, e.path.lastIndexOf('/')))}/x` : e.path
    const above = new Set(ancestors(where.replace(/^\//, '')))
    for (const d of [...entries.filter((x) => x.kind === 'dir').map((x) => x.path), '']) {
      const same = sameSummary(before.hash(d)!, after.hash(d)!)
      if (above.has(d) === same) return false
    }
    return true
  }))
})

t.test('what the quick check calls the same keeps the summary: a time within its millisecond, a symlink\'s time and mode', async () => {
  fc.assert(fc.property(treeArb, (entries) => {
    const moved = entries.map((e): TreeEntry => {
      if (e.kind === 'symlink') return { ...e, mtimeMs: e.mtimeMs + 5000, mode: 0o755 }
      return { ...e, mtimeMs: Math.floor(e.mtimeMs) + 0.9 }
    })
    return sameSummary(TreeSummary.of(entries).hash('')!, TreeSummary.of(moved).hash('')!)
  }))
})

t.test('under() yields every entry below a directory, each directory before what it holds', async () => {
  fc.assert(fc.property(treeArb, (entries) => {
    const s = TreeSummary.of(entries)
    for (const dir of ['', ...entries.filter((e) => e.kind === 'dir').map((e) => e.path)]) {
      const got = [...s.under(dir)].map((e) => e.path)
      const want = entries.map((e) => e.path).filter((p) => dir === '' || p.startsWith(`${dir}/`))
      if (got.length !== want.length || new Set(got).size !== got.length || !want.every((p) => got.includes(p))) return false
      const at = new Map(got.map((p, i) => [p, i]))
      if (!got.every((p) => ancestors(p).every((a) => a === '' || a === dir || !at.has(a) || at.get(a)! < at.get(p)!))) return false
    }
    return true
  }))
  const empty = TreeSummary.of([])
  t.equal(hex(empty.hash('')).length, 32, 'an empty tree has a 16-byte summary too')
  t.equal(empty.hash('nowhere'), undefined, 'no summary for a directory not in the tree')
})

t.test('stableUtime: a time set on a real file reads back in its millisecond, through several hops', async (t) => {
  const root = await tempTree(t)
  const paths = [join(root, 'a'), join(root, 'b'), join(root, 'c')]
  for (const p of paths) await writeFile(p, 'x')
  const set = async (p: string, seconds: number | string): Promise<number> => {
    const fh = await open(p, 'r+')
    await fh.utimes(Date.now() / 1000, seconds)
    await fh.close()
    return (await stat(p)).mtimeMs
  }
  let plainMisses = 0
  let misses = 0
  const n = 1500
  for (let i = 0; i < n; i++) {
    // Whole seconds (archives), whole milliseconds, and anything.
    const any = 1_700_000_000_000 + ((i * 7_919_993.123456789) % 100_000_000_000)
    const time = i % 3 === 0 ? Math.floor(any / 1000) * 1000 : i % 3 === 1 ? Math.floor(any) : any
    const first = await set(paths[0]!, time / 1000)
    if (Math.floor(first) !== Math.floor(time)) plainMisses++
    let prev = first
    for (const p of paths.slice(1)) {
      prev = await set(p, stableUtime(prev))
      if (Math.floor(prev) !== Math.floor(first)) misses++
      if (Math.abs(prev - first) >= 0.005) misses++
    }
  }
  t.ok(plainMisses > 0, `set as is, ${plainMisses} of ${n} times read back in the millisecond before`)
  t.equal(misses, 0, 'set by stableUtime, every time stays in its millisecond, within 5 µs')
  // Before 1970: Node takes a negative number of seconds for "now".
  for (const before of [-86_400_000, -1000.25, -1]) {
    const got = await set(paths[1]!, stableUtime(before))
    t.equal(Math.floor(got), Math.floor(before), `${before} ms stays ${before} ms (read back ${got})`)
  }
})
