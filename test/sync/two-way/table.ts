import t from 'tap'
import { chmod, mkdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { sync } from '../../../src/sync/index.js'
import { isConflictCopy } from '../../../src/sync/conflict.js'
import { walkTree } from '../../../src/fs/index.js'
import { tempTree } from '../../support/temp.js'
import { clientOpts, describeTree, startServer } from '../../support/sync.js'

/**
 * Two-way sync, specified cell by cell as Unison's is: every (change on A) × (change on B) to
 * the same file f.txt, through a real server. A is "home", B is "work"; B's changes are made
 * later (newer mtimes). Then A syncs, B syncs, A syncs, and all three trees must be equal and
 * hold exactly the expected files.
 */

type Change = 'none' | 'create' | 'edit' | 'delete' | 'rename' | 'move' | 'mode' | 'rename+edit'
const CHANGES: readonly Change[] = ['none', 'create', 'edit', 'delete', 'rename', 'move', 'mode', 'rename+edit']

const BASE = 'base line\n'.repeat(300)
const edited = (side: string) => `edited on ${side}\n` + BASE.slice(20)

async function apply(root: string, side: 'A' | 'B', change: Change, at: Date): Promise<void> {
  const f = join(root, 'f.txt')
  const stamp = async (p: string) => utimes(p, at, at)
  switch (change) {
    case 'none':
      return
    case 'create':
      await writeFile(join(root, 'new.txt'), `new on ${side}\n`)
      return stamp(join(root, 'new.txt'))
    case 'edit':
      await writeFile(f, edited(side))
      return stamp(f)
    case 'delete':
      return rm(f)
    case 'rename':
      return rename(f, join(root, `f-${side}.txt`))
    case 'move':
      await mkdir(join(root, `dir-${side}`))
      return rename(f, join(root, `dir-${side}`, 'f.txt'))
    case 'mode':
      return chmod(f, 0o600)
    case 'rename+edit':
      await rename(f, join(root, `re-${side}.txt`))
      await writeFile(join(root, `re-${side}.txt`), edited(side))
      return stamp(join(root, `re-${side}.txt`))
  }
}

/**
 * Expected final files besides keep.txt: path → content (`base`, `A`/`B` = that side's edit,
 * `new A`/`new B` = the created file), `+600` for mode 0600; `copy of PATH` = a conflict copy of
 * PATH holding that content. Directories left empty are not listed.
 */
const EXPECT: Record<Change, Record<Change, string>> = {
  none: {
    none: 'f.txt=base', create: 'f.txt=base new.txt=new B', edit: 'f.txt=B', delete: '', rename: 'f-B.txt=base',
    move: 'dir-B/f.txt=base', mode: 'f.txt=base+600', 'rename+edit': 're-B.txt=B',
  },
  create: {
    none: 'f.txt=base new.txt=new A', create: 'f.txt=base new.txt=new B copy of new.txt=new A', edit: 'f.txt=B new.txt=new A',
    delete: 'new.txt=new A', rename: 'f-B.txt=base new.txt=new A', move: 'dir-B/f.txt=base new.txt=new A',
    mode: 'f.txt=base+600 new.txt=new A', 'rename+edit': 're-B.txt=B new.txt=new A',
  },
  edit: {
    none: 'f.txt=A', create: 'f.txt=A new.txt=new B', edit: 'f.txt=B copy of f.txt=A', delete: 'f.txt=A', rename: 'f-B.txt=A',
    move: 'dir-B/f.txt=A',
    // A mode change is a change too: both changed f, differently, so both versions are kept.
    mode: 'f.txt=A copy of f.txt=base+600',
    'rename+edit': 'f.txt=A re-B.txt=B',
  },
  delete: {
    none: '', create: 'new.txt=new B', edit: 'f.txt=B', delete: '', rename: 'f-B.txt=base', move: 'dir-B/f.txt=base',
    mode: 'f.txt=base+600', 'rename+edit': 're-B.txt=B',
  },
  rename: {
    none: 'f-A.txt=base', create: 'f-A.txt=base new.txt=new B', edit: 'f-A.txt=B', delete: 'f-A.txt=base',
    rename: 'f-A.txt=base f-B.txt=base', move: 'f-A.txt=base dir-B/f.txt=base', mode: 'f-A.txt=base+600',
    'rename+edit': 'f-A.txt=base re-B.txt=B',
  },
  move: {
    none: 'dir-A/f.txt=base', create: 'dir-A/f.txt=base new.txt=new B', edit: 'dir-A/f.txt=B', delete: 'dir-A/f.txt=base',
    rename: 'dir-A/f.txt=base f-B.txt=base', move: 'dir-A/f.txt=base dir-B/f.txt=base', mode: 'dir-A/f.txt=base+600',
    'rename+edit': 'dir-A/f.txt=base re-B.txt=B',
  },
  mode: {
    none: 'f.txt=base+600', create: 'f.txt=base+600 new.txt=new B', edit: 'f.txt=B copy of f.txt=base+600', delete: 'f.txt=base+600',
    rename: 'f-B.txt=base+600', move: 'dir-B/f.txt=base+600', mode: 'f.txt=base+600', 'rename+edit': 'f.txt=base+600 re-B.txt=B',
  },
  'rename+edit': {
    none: 're-A.txt=A', create: 're-A.txt=A new.txt=new B', edit: 'f.txt=B re-A.txt=A', delete: 're-A.txt=A',
    rename: 're-A.txt=A f-B.txt=base', move: 're-A.txt=A dir-B/f.txt=base', mode: 'f.txt=base+600 re-A.txt=A',
    'rename+edit': 're-A.txt=A re-B.txt=B',
  },
}

const CONTENT: Record<string, string> = { base: BASE, A: edited('A'), B: edited('B'), 'new A': 'new on A\n', 'new B': 'new on B\n' }

/** The tree as the notation above writes it. */
async function observe(root: string): Promise<string[]> {
  const byContent = new Map(Object.entries(CONTENT).map(([k, v]) => [v, k]))
  const out: string[] = []
  for await (const e of walkTree(root)) {
    if (e.kind !== 'file' || e.path === 'keep.txt') continue
    const body = await readFile(join(root, e.path), 'utf8')
    const what = (byContent.get(body) ?? `?${body.slice(0, 20)}`) + (e.mode === 0o600 ? '+600' : '')
    if (isConflictCopy(e.path)) {
      const original = e.path.replace(/\.dsync-conflict-[A-Za-z0-9_.-]*?\d{8}-\d{6}(-\d+)?/, '')
      out.push(`copy of ${original}=${what}`)
    } else out.push(`${e.path}=${what}`)
  }
  return out.sort()
}

const expected = (spec: string): string[] => (spec === '' ? [] : spec.split(/(?<!copy of) (?=(?:copy of )?[\w./-]+=)/).sort())

t.test('two-way sync: every change on A × every change on B', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const t0 = Date.now() - 3600_000
  for (const a of CHANGES) {
    for (const b of CHANGES) {
      const cell = `${a.replace('+', '-')}__${b.replace('+', '-')}`
      const url = `${server.url}/${cell}`
      const A = await tempTree(t, { 'f.txt': BASE, 'keep.txt': 'kept\n' })
      const B = await tempTree(t)
      const old = new Date(t0)
      await utimes(join(A, 'f.txt'), old, old)
      await sync(A, url, clientOpts({ machine: 'home' }))
      await sync(B, url, clientOpts({ machine: 'work' }))
      await apply(A, 'A', a, new Date(t0 + 10_000))
      await apply(B, 'B', b, new Date(t0 + 20_000))
      const runs = [
        await sync(A, url, clientOpts({ machine: 'home' })),
        await sync(B, url, clientOpts({ machine: 'work' })),
        await sync(A, url, clientOpts({ machine: 'home' })),
      ]
      const errors = runs.flatMap((r) => r.events.filter((e) => e.action === 'error'))
      t.same(errors, [], `${a} × ${b}: no errors`)
      t.same(await observe(A), expected(EXPECT[a][b]), `${a} × ${b}: A holds the expected files`)
      const tree = await describeTree(A)
      t.same(await describeTree(B), tree, `${a} × ${b}: B equals A`)
      t.same(await describeTree(join(served, cell)).then(dropState), tree, `${a} × ${b}: the server equals A`)
      const again = await sync(A, url, clientOpts({ machine: 'home' }))
      t.same(again.events.filter((e) => e.action !== 'unchanged'), [], `${a} × ${b}: a sync after that is a no-op`)
    }
  }
})

function dropState(tree: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).filter(([p]) => p !== '.dsync' && !p.startsWith('.dsync/')))
}


t.test('two-way sync: a path that changes kind on one side replaces the other side\'s entry', async (t) => {
  const { symlink, readlink, lstat } = await import('node:fs/promises')
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const cases: [string, Record<string, string>, (root: string) => Promise<void>, (root: string) => Promise<void>][] = [
    ['file becomes a directory', { 'f.txt': BASE }, async (A) => {
      await rm(join(A, 'f.txt'))
      await mkdir(join(A, 'f.txt'))
      await writeFile(join(A, 'f.txt', 'inside.txt'), 'inside\n')
    }, async (root) => void t.equal(await readFile(join(root, 'f.txt', 'inside.txt'), 'utf8'), 'inside\n')],
    ['directory becomes a file', { 'sub/a.txt': 'a\n', 'sub/b/c.txt': 'c\n' }, async (A) => {
      await rm(join(A, 'sub'), { recursive: true })
      await writeFile(join(A, 'sub'), 'now a file\n')
    }, async (root) => void t.equal(await readFile(join(root, 'sub'), 'utf8'), 'now a file\n')],
    ['link becomes a file', { 'target.txt': 't\n' }, async (A) => {
      await rm(join(A, 'link'))
      await writeFile(join(A, 'link'), 'a file now (sed -i on a link does this)\n')
    }, async (root) => void t.ok((await lstat(join(root, 'link'))).isFile())],
  ]
  for (const [name, files, change, check] of cases) {
    const cell = name.replace(/\W+/g, '-')
    const url = `${server.url}/${cell}`
    const A = await tempTree(t, files)
    if (name.startsWith('link')) await symlink('target.txt', join(A, 'link'))
    const B = await tempTree(t)
    await sync(A, url, clientOpts({ machine: 'home' }))
    await sync(B, url, clientOpts({ machine: 'work' }))
    if (name.startsWith('link')) t.equal(await readlink(join(B, 'link')), 'target.txt', `${name}: the link reached B`)
    await change(A)
    const runs = [await sync(A, url, clientOpts({ machine: 'home' })), await sync(B, url, clientOpts({ machine: 'work' }))]
    t.same(runs.flatMap((r) => r.events.filter((e) => e.action === 'error')), [], `${name}: no errors`)
    await check(B)
    t.same(await describeTree(B), await describeTree(A), `${name}: B equals A`)
    t.same(await describeTree(join(served, cell)), await describeTree(A), `${name}: the server equals A`)
  }
})

t.test('two-way sync: a file made on one machine and a directory on the other, at one path', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const url = `${server.url}/x-cell`
  const A = await tempTree(t)
  const B = await tempTree(t)
  await sync(A, url, clientOpts({ machine: 'home' }))
  await sync(B, url, clientOpts({ machine: 'work' }))
  await writeFile(join(A, 'x'), 'a file at home\n')
  await mkdir(join(B, 'x'))
  await writeFile(join(B, 'x', 'in.txt'), 'in a directory at work\n')
  const runs = [await sync(A, url, clientOpts({ machine: 'home' })), await sync(B, url, clientOpts({ machine: 'work' })), await sync(A, url, clientOpts({ machine: 'home' }))]
  t.same(runs.flatMap((r) => r.events.filter((e) => e.action === 'error')), [], 'no errors')
  t.same(await describeTree(B), await describeTree(A), 'B equals A')
  t.equal(await readFile(join(A, 'x', 'in.txt'), 'utf8'), 'in a directory at work\n', 'the directory keeps the name')
  const copies = (await observe(A)).filter((e) => e.startsWith('copy of x='))
  t.equal(copies.length, 1, 'the file is kept as a conflict copy')
})
