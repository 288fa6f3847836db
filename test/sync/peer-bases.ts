import t from 'tap'
import { readFile, readdir, writeFile, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { pull, push } from '../../src/sync/index.js'
import { isConflictCopy } from '../../src/sync/conflict.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, startServer } from '../support/sync.js'

/** A later mtime than anything written so far, so "newer" never ties within a millisecond. */
async function touchLater(path: string, seconds: number): Promise<void> {
  const at = new Date(Date.now() + seconds * 1000)
  await utimes(path, at, at)
}

t.test('two machines pushing to one server: a push that never saw the other machine\'s version is a conflict, not an overwrite', async (t) => {
  const served = await tempTree(t)
  const server = await startServer(t, served)
  const home = await tempTree(t, { 'plan.txt': 'v1\n', 'other.txt': 'same\n' })
  const work = await tempTree(t)
  await push(home, server.url, clientOpts())
  await pull(server.url, work, clientOpts())

  await writeFile(join(home, 'plan.txt'), 'v2 from home\n')
  await touchLater(join(home, 'plan.txt'), 10)
  const fromHome = await push(home, server.url, clientOpts())
  t.match(fromHome.events.find((e) => e.path === 'plan.txt'), { action: 'delta' }, 'home\'s edit lands: the server had what home last synced')

  // Work has not pulled home's v2 and edits its own v1: the server's base for work is v1.
  await writeFile(join(work, 'plan.txt'), 'v3 from work\n')
  await touchLater(join(work, 'plan.txt'), 20)
  const fromWork = await push(work, server.url, clientOpts())
  const ev = fromWork.events.find((e) => e.path === 'plan.txt')
  t.match(ev, { action: 'conflict' }, 'work\'s push is told its version met one it never saw')
  t.equal(await readFile(join(served, 'plan.txt'), 'utf8'), 'v3 from work\n', 'the pusher\'s version is written')
  const copies = (await readdir(served)).filter(isConflictCopy)
  t.equal(copies.length, 1, 'and home\'s version is kept beside it')
  t.equal(await readFile(join(served, copies[0]!), 'utf8'), 'v2 from home\n', 'the copy holds home\'s edit: nothing lost')
  t.match(fromWork.events.find((e) => e.path === 'other.txt'), { action: 'unchanged' }, 'files neither changed stay quiet')

  // Home pushes again without having pulled work's version, its plan.txt unchanged since its push.
  const again = await push(home, server.url, clientOpts())
  t.match(again.events.find((e) => e.path === 'plan.txt'), { action: 'kept' }, 'home\'s older version does not replace work\'s: kept (pull to get it)')
  t.equal(await readFile(join(served, 'plan.txt'), 'utf8'), 'v3 from work\n')

  // After a pull, home's next edit is an ordinary overwrite again.
  await pull(server.url, home, clientOpts())
  await writeFile(join(home, 'plan.txt'), 'v4 from home\n')
  await touchLater(join(home, 'plan.txt'), 30)
  const after = await push(home, server.url, clientOpts())
  t.match(after.events.find((e) => e.path === 'plan.txt'), { action: 'delta' }, 'once home has seen the server\'s version, its edit writes')
  t.equal(await readFile(join(served, 'plan.txt'), 'utf8'), 'v4 from home\n')
})
