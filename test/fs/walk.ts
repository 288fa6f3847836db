import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { type TreeEntry, comparePaths, walkDirs, walkTree } from '../../src/fs/index.js'
import type { DsyncError } from '../../src/errors.js'
import { collect } from '../support/random.js'
import { tempTree } from '../support/temp.js'

const paths = (es: readonly TreeEntry[]) => es.map((e) => e.path)

t.test('depth-first, a dir right before its contents, siblings in byte order', async (t) => {
  const root = await tempTree(t, { 'a/x': '1', 'a-b': '2', 'B': '3', 'a/c/d': '4', 'é': '5', 'z': '6' })
  await mkdir(join(root, 'empty'))
  const es = await collect(walkTree(root))
  t.same(paths(es), ['B', 'a', 'a/c', 'a/c/d', 'a/x', 'a-b', 'empty', 'z', 'é'])
  t.same(paths(es), [...paths(es)].sort(comparePaths), 'walk order is comparePaths order')
  t.match(es.find((e) => e.path === 'a/x'), { kind: 'file', size: 1, mode: Number })
  t.match(es.find((e) => e.path === 'empty'), { kind: 'dir', size: 0 })
})

t.test('a directory that cannot be listed when reached is reported and left empty; the walk goes on in order (walkTree and walkDirs)', async (t) => {
  for (const by of ['entries', 'dirs'] as const) {
    const root = await tempTree(t, { 'a/x': '1', 'b/c/y': '2', 'b/z': '3', 'd/e/w': '4', 'f': '5' })
    const errors: DsyncError[] = []
    const got: string[] = []
    // `b` goes as the walk reaches it: listed already, it is a directory no more.
    const gone = (): Promise<void> => rm(join(root, 'b'), { recursive: true })
    if (by === 'entries') {
      for await (const e of walkTree(root, { onError: (err) => errors.push(err) })) {
        got.push(e.path)
        if (e.path === 'b') await gone()
      }
      t.same(got, ['a', 'a/x', 'b', 'd', 'd/e', 'd/e/w', 'f'], 'b reported, nothing under it; d, its own and f after')
    } else {
      for await (const { dir, entries } of walkDirs(root, { onError: (err) => errors.push(err) })) {
        got.push(`${dir}:${entries.map((e) => e.path).join(',')}`)
        if (dir === 'a') await gone()
      }
      t.same(got, [':a,b,d,f', 'a:a/x', 'd:d/e', 'd/e:d/e/w'], 'no listing of b, the others in the walk\'s order')
    }
    t.same(errors.map((e) => e.path), ['b'], `${by}: one error, for b`)
  }
})

t.test('comparePaths ranks by code point (UTF-8 byte order) with / lowest', async (t) => {
  t.ok(comparePaths('a', 'a/x') < 0)
  t.ok(comparePaths('a/x', 'a-b') < 0)
  t.ok(comparePaths('\u{1F600}', '\uFFFD') > 0, 'astral after BMP, unlike UTF-16 order')
  t.equal(comparePaths('same', 'same'), 0)
})

t.test('symlinks are reported with their target and never followed (also to a dir outside)', async (t) => {
  const outside = await tempTree(t, { 'secret/inner.txt': 'x' })
  const root = await tempTree(t, { 'f.txt': 'hi' })
  await symlink(outside, join(root, 'out'))
  await symlink('f.txt', join(root, 'rel'))
  await symlink('missing', join(root, 'dangling'))
  const es = await collect(walkTree(root))
  t.same(paths(es), ['dangling', 'f.txt', 'out', 'rel'])
  t.match(es.find((e) => e.path === 'out'), { kind: 'symlink', target: outside })
  t.match(es.find((e) => e.path === 'rel'), { kind: 'symlink', target: 'f.txt' })
})

t.test('nested .dsyncignore files and --exclude', async (t) => {
  const root = await tempTree(t, {
    '.dsyncignore': '*.log\nnode_modules/\n',
    'a.log': '',
    'keep.txt': '',
    'node_modules/x/index.js': '',
    'sub/.dsyncignore': '!important.log\nsecret.txt\n',
    'sub/important.log': '',
    'sub/other.log': '',
    'sub/secret.txt': '',
    'sub/deep/secret.txt': '',
    'sub/deep/fine.txt': '',
    'other/secret.txt': '',
    'tmpdir/a': '',
    'x.bak': '',
  })
  const es = await collect(walkTree(root, { exclude: ['*.bak', 'tmpdir/'] }))
  t.same(paths(es), [
    '.dsyncignore',
    'keep.txt',
    'other',
    'other/secret.txt',
    'sub',
    'sub/.dsyncignore',
    'sub/deep',
    'sub/deep/fine.txt',
    'sub/important.log',
  ])
})

t.test('skips .dsync state folders and dsync temp files anywhere (temps reported to onTemp), and special files (reported to onError)', async (t) => {
  const root = await tempTree(t, { '.dsync/state.mdb': 'x', 'sub/.dsync/state.mdb': 'y', 'sub/kept': 'z', '.dsync-tmp-1': '', 'sub/.dsync-tmp-2': '' })
  execFileSync('mkfifo', [join(root, 'fifo')])
  const errors: DsyncError[] = []
  const temps: string[] = []
  const es = await collect(walkTree(root, { onError: (e) => errors.push(e), onTemp: (p) => temps.push(p) }))
  t.same(paths(es), ['sub', 'sub/kept'])
  t.same(temps.sort(), ['.dsync-tmp-1', 'sub/.dsync-tmp-2'])
  t.match(errors, [{ code: 'NOT_A_FILE', path: 'fifo', message: /FIFO/ }])
})

t.test('names dsync cannot carry go to onError and the walk goes on; without it, it throws', async (t) => {
  const root = await tempTree(t, { 'ok.txt': '', 'back\\slash': '' })
  const errors: DsyncError[] = []
  const es = await collect(walkTree(root, { onError: (e) => errors.push(e) }))
  t.same(paths(es), ['ok.txt'])
  t.match(errors, [{ code: 'UNSAFE_PATH', path: 'back\\slash' }])
  await t.rejects(collect(walkTree(root)), { code: 'UNSAFE_PATH' })
})

t.test('a name that is not valid UTF-8 is reported, not silently dropped', async (t) => {
  const root = await tempTree(t, { 'ok.txt': '' })
  await writeFile(Buffer.concat([Buffer.from(`${root}/bad-`), Buffer.of(0xff, 0xfe)]), 'x')
  const errors: DsyncError[] = []
  const es = await collect(walkTree(root, { onError: (e) => errors.push(e) }))
  t.same(paths(es), ['ok.txt'])
  t.match(errors, [{ code: 'UNSAFE_PATH', message: /not valid UTF-8/ }])
})

t.test('an oversized .dsyncignore is reported and not applied; the walk goes on', async (t) => {
  const root = await tempTree(t, { 'sub/.dsyncignore': '#'.repeat(1024 * 1024 + 1), 'sub/x.log': '' })
  const errors: DsyncError[] = []
  const es = await collect(walkTree(root, { onError: (e) => errors.push(e) }))
  t.same(paths(es), ['sub', 'sub/.dsyncignore', 'sub/x.log'])
  t.match(errors, [{ code: 'BAD_DATA', path: 'sub/.dsyncignore', message: /over 1048576/ }])
})

t.test('a missing root is NOT_FOUND; an aborted walk stops with ABORTED', async (t) => {
  const root = await tempTree(t, { 'a/b': '', 'c/d': '' })
  await t.rejects(collect(walkTree(join(root, 'nope'))), { code: 'NOT_FOUND' })
  const ac = new AbortController()
  const seen: string[] = []
  await t.rejects(
    (async () => {
      for await (const e of walkTree(root, { signal: ac.signal })) {
        seen.push(e.path)
        ac.abort()
      }
    })(),
    { code: 'ABORTED' },
  )
  t.same(seen, ['a'])
  await rm(join(root, 'a'), { recursive: true })
  await writeFile(join(root, 'c/e'), '')
  t.same(paths(await collect(walkTree(root))), ['c', 'c/d', 'c/e'])
})
