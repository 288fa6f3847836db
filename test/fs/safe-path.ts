import { mkdir, rename, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { checkChildPath } from '../../src/fs/safe-path.js'
import { CheckedDirs, checkRelPath, resolveInside } from '../../src/fs/index.js'
import { tempTree } from '../support/temp.js'

t.test('checkRelPath accepts ordinary relative paths unchanged', async (t) => {
  for (const p of ['a', 'a/b/c.txt', '.hidden', 'a/.dsync.bak', 'dir/..x', '...', 'é/日本語', 'x'.repeat(255)]) {
    t.equal(checkRelPath(p), p)
  }
})

t.test('checkRelPath refuses each hostile shape with UNSAFE_PATH and says why', async (t) => {
  const cases: [string, RegExp][] = [
    ['', /empty/],
    ['/etc/passwd', /absolute/],
    ['..', /'\.\.' segment/],
    ['a/../../b', /'\.\.' segment/],
    ['./a', /'\.' segment/],
    ['a//b', /empty segment/],
    ['a/', /empty segment/],
    ['a\0b', /NUL/],
    ['a\\..\\b', /backslash/],
    ['x'.repeat(256), /longer than 255/],
    [Array.from({ length: 20 }, () => 'y'.repeat(250)).join('/'), /longer than 4096/],
    ['.dsync/state.mdb', /state folder/],
    ['a/.dsync-tmp-123', /temp files/],
    ['a/.dsync/x', /state folder/],
    ['.dsync', /state folder/],
  ]
  for (const [p, why] of cases) t.throws(() => checkRelPath(p), { code: 'UNSAFE_PATH', message: why, path: p }, JSON.stringify(p))
})

t.test('segment length counts UTF-8 bytes, not characters', async (t) => {
  t.equal(checkRelPath('é'.repeat(127)), 'é'.repeat(127)) // 254 bytes
  t.throws(() => checkRelPath('é'.repeat(128)), { code: 'UNSAFE_PATH' }) // 256 bytes
})

t.test('property: checkChildPath, for a name under a checked path, decides as checkRelPath on the whole', async (t) => {
  const name = fc.oneof(
    fc.constantFrom('a', '.', '..', '', 'b.txt', '\\', 'a\0b', 'a/b', '.dsync', '.dsync-tmp-x', 'x y', 'é'.repeat(127), 'é'.repeat(128), 'z'.repeat(255), 'z'.repeat(256)),
    fc.string({ maxLength: 300 }),
  ).filter((n) => !n.includes('/')) // a name from readdir never holds one (refused below)
  const parent = fc.oneof(fc.constant(''), fc.constantFrom('d', 'd/e', 'é'.repeat(127), ('y'.repeat(200) + '/').repeat(19) + 'y'))
  const verdict = (f: () => unknown): string => {
    try {
      f()
      return 'ok'
    } catch (err) {
      return (err as { code?: string }).code ?? 'other'
    }
  }
  fc.assert(
    fc.property(parent, name, (dir, n) => {
      const rel = dir === '' ? n : `${dir}/${n}`
      return verdict(() => checkChildPath(rel, n)) === verdict(() => checkRelPath(rel))
    }),
    { numRuns: 2000 },
  )
  t.pass('the same verdict')
  t.throws(() => checkChildPath('d/a/b', 'a/b'), { code: 'UNSAFE_PATH' }, "a name with a '/' is no name")
})

t.test('property: an accepted path never leaves the root when joined', async (t) => {
  const seg = fc.constantFrom('a', '.', '..', '', 'b.txt', '\\', '\0', '/', '.dsync', 'x y')
  fc.assert(
    fc.property(fc.array(seg, { minLength: 1, maxLength: 6 }), (parts) => {
      const p = parts.join('/')
      let ok: boolean
      try {
        checkRelPath(p)
        ok = true
      } catch {
        ok = false
      }
      if (ok) {
        const joined = join('/root', p)
        return joined.startsWith('/root/') && !joined.includes('/../')
      }
      return true
    }),
  )
  t.pass('no accepted path escapes')
})

t.test('resolveInside: plain and not-yet-existing paths resolve under the root', async (t) => {
  const root = await tempTree(t, { 'a/b.txt': 'x' })
  t.equal(await resolveInside(root, 'a/b.txt'), join(root, 'a/b.txt'))
  t.equal(await resolveInside(root, 'a/new/deeper/file'), join(root, 'a/new/deeper/file'))
  t.equal(await resolveInside(root, 'fresh'), join(root, 'fresh'))
})

t.test('resolveInside refuses a symlinked parent, even one pointing inside the root', async (t) => {
  const root = await tempTree(t, { 'real/f': 'x' })
  const outside = await tempTree(t, { 'victim.txt': 'keep' })
  await symlink(outside, join(root, 'out'))
  await symlink('real', join(root, 'in'))
  await t.rejects(resolveInside(root, 'out/victim.txt'), { code: 'UNSAFE_PATH', message: /'out' is a symlink/ })
  await t.rejects(resolveInside(root, 'in/f'), { code: 'UNSAFE_PATH', message: /'in' is a symlink/ })
  await t.rejects(resolveInside(root, 'out/new/file'), { code: 'UNSAFE_PATH' })
})

t.test('resolveInside: a final symlink only when allowed; a file as parent is refused', async (t) => {
  const root = await tempTree(t, { 'file.txt': 'x' })
  await symlink('/etc/passwd', join(root, 'link'))
  await t.rejects(resolveInside(root, 'link'), { code: 'UNSAFE_PATH', message: /would be followed/ })
  t.equal(await resolveInside(root, 'link', { allowFinalSymlink: true }), join(root, 'link'))
  await t.rejects(resolveInside(root, 'file.txt/x'), { code: 'UNSAFE_PATH', message: /not a directory/ })
  await t.rejects(resolveInside(root, '../escape'), { code: 'UNSAFE_PATH' })
})

t.test('resolveInside checks every level, not just the first', async (t) => {
  const root = await tempTree(t)
  await mkdir(join(root, 'a/b'), { recursive: true })
  await writeFile(join(root, 'a/b/ok'), 'x')
  await symlink('/tmp', join(root, 'a/b/c'))
  t.equal(await resolveInside(root, 'a/b/ok'), join(root, 'a/b/ok'))
  await t.rejects(resolveInside(root, 'a/b/c/d'), { code: 'UNSAFE_PATH', message: /'a\/b\/c'/ })
})

t.test('CheckedDirs: refuses what resolveInside refuses; a folder found real is not checked again until forgotten; one not made yet is checked once it is', async (t) => {
  const root = await tempTree(t, { 'a/b/f.txt': 'x', 'out/f.txt': 'outside' })
  await symlink(join(root, 'out'), join(root, 'link'))
  const dirs = new CheckedDirs(root)
  t.throws(() => dirs.abs('link/f.txt'), { code: 'UNSAFE_PATH' }, 'a symlinked folder')
  t.throws(() => dirs.abs('../f.txt'), { code: 'UNSAFE_PATH' }, 'a hostile path')
  t.equal(dirs.abs('a/b/f.txt'), join(root, 'a/b/f.txt'))
  t.ok(dirs.has('a') && dirs.has('a/b'), 'both folders above it known')
  // Swapped for a symlink once known: the session's to prevent (the receiver writes alone)...
  await rename(join(root, 'a'), join(root, 'a-was'))
  await symlink(join(root, 'out'), join(root, 'a'))
  t.equal(dirs.abs('a/g.txt'), join(root, 'a/g.txt'), 'known: joined')
  // ...and once forgotten, checked again.
  dirs.delete('a')
  t.throws(() => dirs.abs('a/g.txt'), { code: 'UNSAFE_PATH' }, 'forgotten: checked again')
  // A folder that does not exist yet is not taken for a real one.
  t.equal(dirs.abs('new/f.txt'), join(root, 'new/f.txt'))
  t.notOk(dirs.has('new'))
  await symlink(join(root, 'out'), join(root, 'new'))
  t.throws(() => dirs.abs('new/f.txt'), { code: 'UNSAFE_PATH' }, 'made a symlink since: refused')
})
