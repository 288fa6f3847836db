import t from 'tap'
import fc from 'fast-check'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { comparePaths, TreeListing, walkTree, type TreeEntry } from '../../src/fs/index.js'
import { tempTree } from '../support/temp.js'

// TreeListing keeps a walked tree as columns per directory (issue 8: a no-op of 1,000,000
// files held an object per entry, several times over). What it gives back must be exactly
// what the walk found, in the walk's order.

/** A random tree: names with non-ASCII letters (sorted by code point, not code unit). The `u` flag
 *  keeps 😀 whole: without it the class held its two halves, and two names made of lone halves
 *  are one name on disk (each becomes U+FFFD): EEXIST. */
const treeArb = fc.array(
  fc.record({
    dir: fc.constantFrom('', 'a', 'a/b', 'é', 'z-z', 'a/b/c'),
    name: fc.stringMatching(/^[a-zé😀_.-]{1,6}$/u).filter((n) => n !== '.' && n !== '..' && !n.startsWith('.dsync')),
    kind: fc.constantFrom('file', 'file', 'file', 'symlink'),
    size: fc.nat(300),
    mtimeMs: fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }),
  }),
  { minLength: 0, maxLength: 40 },
)

t.test('a listing walked gives back the walk: every entry, its metadata, in walkTree order; get finds each, and nothing else', async (t) => {
  await fc.assert(fc.asyncProperty(treeArb, async (leaves) => {
    const root = await tempTree(t)
    for (const d of ['a', 'a/b', 'a/b/c', 'é', 'z-z', 'empty']) await mkdir(join(root, d), { recursive: true })
    const made = new Set<string>()
    for (const l of leaves) {
      const path = l.dir === '' ? l.name : `${l.dir}/${l.name}`
      if (made.has(path) || ['a', 'a/b', 'a/b/c', 'é', 'z-z', 'empty'].includes(path)) continue
      made.add(path)
      if (l.kind === 'file') await writeFile(join(root, path), 'x'.repeat(l.size))
      else await symlink(`../target-${l.size}`, join(root, path))
    }
    const walked: TreeEntry[] = []
    for await (const e of walkTree(root)) walked.push(e)
    const listing = await TreeListing.walk(root)
    t.same([...listing.under()], walked)
    t.equal(listing.size, walked.length)
    for (const e of walked) if (JSON.stringify(listing.get(e.path)) !== JSON.stringify(e)) return false
    for (const missing of ['nope', 'a/nope', 'empty/x', 'a/b/c/d/e', '']) if (listing.get(missing) !== undefined) return false
    t.equal(listing.count('empty'), 0)
    t.same(listing.children('a').map((e) => e.path), walked.filter((e) => /^a\/[^/]+$/.test(e.path)).map((e) => e.path))
    t.same([...listing.under('a')].map((e) => e.path), walked.filter((e) => e.path.startsWith('a/')).map((e) => e.path))
    return true
  }), { numRuns: 25 })
})

t.test('a listing of entries in any order: the walk order (comparePaths, each directory before what it holds)', async () => {
  fc.assert(fc.property(treeArb, fc.nat(), (leaves, seed) => {
    const entries = new Map<string, TreeEntry>()
    for (const d of ['a', 'a/b', 'a/b/c', 'é', 'z-z']) entries.set(d, { path: d, kind: 'dir', size: 0, mtimeMs: 1, mode: 0o755 })
    for (const l of leaves) {
      const path = l.dir === '' ? l.name : `${l.dir}/${l.name}`
      if (entries.has(path)) continue
      entries.set(path, l.kind === 'file'
        ? { path, kind: 'file', size: l.size, mtimeMs: l.mtimeMs + 0.5, mode: 0o644 }
        : { path, kind: 'symlink', size: 3, mtimeMs: l.mtimeMs, mode: 0o777, target: `t${l.size}` })
    }
    const all = [...entries.values()]
    const shuffled = all.map((e, i) => ({ e, k: (i * 7919 + seed) % 101 })).sort((x, y) => x.k - y.k).map((x) => x.e)
    const listing = TreeListing.of(shuffled)
    const want = [...all].sort((x, y) => comparePaths(x.path, y.path))
    return JSON.stringify([...listing.under()]) === JSON.stringify(want) && all.every((e) => JSON.stringify(listing.get(e.path)) === JSON.stringify(e))
  }))
})

t.test('the columns grow past their first size', async (t) => {
  const entries: TreeEntry[] = []
  for (let i = 0; i < 5000; i++) entries.push({ path: `d${i % 7}/f${i}`, kind: 'file', size: i * 1_000_003, mtimeMs: 1_700_000_000_000.25 + i, mode: 0o600 })
  for (let d = 0; d < 7; d++) entries.push({ path: `d${d}`, kind: 'dir', size: 0, mtimeMs: 5, mode: 0o700 })
  const listing = TreeListing.of(entries)
  t.equal(listing.size, 5007)
  t.same(listing.get('d1/f4999'), { path: 'd1/f4999', kind: 'file', size: 4999 * 1_000_003, mtimeMs: 1_700_000_000_000.25 + 4999, mode: 0o600 })
  t.equal(listing.count('d0'), 715)
})
