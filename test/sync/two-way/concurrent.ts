import t from 'tap'
import { readFile, readdir, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { sync } from '../../../src/sync/index.js'
import { isConflictCopy } from '../../../src/sync/conflict.js'
import { tempTree } from '../../support/temp.js'
import { clientOpts, describeTree, startServer } from '../../support/sync.js'

t.test('three machines syncing one served tree at once: every change applied or kept as a conflict copy', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const names = ['home', 'work', 'laptop']
  const trees = [await tempTree(t, { 'shared.txt': 'v0\n' }), await tempTree(t), await tempTree(t)]
  for (const [i, root] of trees.entries()) await sync(root, server.url, clientOpts({ machine: names[i]! }))
  // Each edits its own file and the shared one, with distinct times.
  for (const [i, root] of trees.entries()) {
    await writeFile(join(root, `${names[i]}.txt`), `own file of ${names[i]}\n`)
    await writeFile(join(root, 'shared.txt'), `shared, as edited on ${names[i]}\n`)
    const at = new Date(Date.now() + (i + 1) * 10_000)
    await utimes(join(root, 'shared.txt'), at, at)
  }
  const runs = await Promise.all(trees.map((root, i) => sync(root, server.url, clientOpts({ machine: names[i]! }))))
  t.same(runs.flatMap((r) => r.events.filter((e) => e.action === 'error')), [], 'no errors: the sessions took turns')
  // One more round brings everyone everything.
  for (const [i, root] of trees.entries()) await sync(root, server.url, clientOpts({ machine: names[i]! }))
  for (const [i, root] of trees.entries()) await sync(root, server.url, clientOpts({ machine: names[i]! }))
  const first = await describeTree(trees[0]!)
  for (const root of trees.slice(1)) t.same(await describeTree(root), first, 'all trees are equal')
  const files = (await readdir(trees[0]!)).filter((p) => p !== '.dsync')
  for (const n of names) t.ok(files.includes(`${n}.txt`), `${n}'s own file arrived everywhere`)
  const versions = await Promise.all(files.filter((p) => p === 'shared.txt' || isConflictCopy(p)).map((p) => readFile(join(trees[0]!, p), 'utf8')))
  for (const n of names) t.ok(versions.includes(`shared, as edited on ${n}\n`), `${n}'s edit of the shared file is kept (the file or a conflict copy)`)
})
