// No silent loss (issue 7 item 7): --delete never removes a file that appeared on the receiver
// without this sender, nor the receiver's conflict copies; a conflict (both sides changed) exits
// 10; `push -c` reports a file changed only on the receiver as kept (exit 10), as the quick check
// does, never as unchanged.
import t from 'tap'
import { readdir, readFile, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runCli } from '../support/cli.js'
import { startServer, TOKEN } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

interface CliEvent { path: string; action: string; code?: string }

async function dsync(args: string[]): Promise<{ code: number; events: CliEvent[]; stderr: string }> {
  const r = await runCli([...args, '--json'], { env: { DSYNC_TOKEN: TOKEN } })
  let events: CliEvent[] = []
  try {
    events = (JSON.parse(r.stdout) as { events: CliEvent[] }).events
  } catch {
    // no JSON: the run failed before it could report; stderr says why
  }
  return { code: r.code, events, stderr: r.stderr }
}

const later = async (root: string, path: string, content: string, plusMs: number): Promise<void> => {
  await writeFile(join(root, path), content)
  const s = (Date.now() + plusMs) / 1000
  await utimes(join(root, path), s, s)
}

t.test('--delete keeps a file the sender never saw, and deletes one it synced and then removed', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'a', 'old.txt': 'old' })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  t.equal((await dsync(['push', home, server.url])).code, 0, 'first push')
  const { rm } = await import('node:fs/promises')
  await rm(join(home, 'old.txt'))
  await writeFile(join(work, 'mine.txt'), 'made on the receiver, never synced')
  const r = await dsync(['push', '--delete', home, server.url])
  t.same(await readFile(join(work, 'mine.txt'), 'utf8'), 'made on the receiver, never synced', 'mine.txt is still there')
  t.ok(r.events.some((e) => e.path === 'mine.txt' && e.action === 'kept'), `mine.txt reported as kept: ${JSON.stringify(r.events)}`)
  await t.rejects(readFile(join(work, 'old.txt')), 'old.txt, synced before and removed by the sender, is deleted')
})

t.test('a conflict exits 10, and --delete keeps the conflict copy', async (t) => {
  const home = await tempTree(t, { 'x.txt': 'v1' })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  t.equal((await dsync(['push', home, server.url])).code, 0, 'first push')
  await later(work, 'x.txt', 'changed on the receiver', 2000)
  await later(home, 'x.txt', 'changed on the sender!', 4000)
  const c = await dsync(['push', home, server.url])
  t.equal(c.code, 10, `a conflict exits 10 (events ${JSON.stringify(c.events)})`)
  const copies = (await readdir(work)).filter((n) => n.includes('dsync-conflict'))
  t.equal(copies.length, 1, `one conflict copy: ${JSON.stringify(copies)}`)
  const d = await dsync(['push', '--delete', home, server.url])
  for (const copy of copies) {
    t.same(await readFile(join(work, copy), 'utf8'), 'changed on the receiver', `--delete kept the conflict copy ${copy}`)
    t.notOk(d.events.some((e) => e.path === copy && e.action === 'deleted'), 'not reported as deleted')
  }
})

for (const checksum of [false, true]) {
  t.test(`push${checksum ? ' -c' : ''}: a file changed only on the receiver is kept, exit 10`, async (t) => {
    const home = await tempTree(t, { 'x.txt': 'v1', 'y.txt': 'same' })
    const work = await tempTree(t)
    const server = await startServer(t, work)
    t.equal((await dsync(['push', home, server.url])).code, 0, 'first push')
    await later(work, 'x.txt', 'edited on the receiver', 3000)
    const r = await dsync(['push', ...(checksum ? ['-c'] : []), home, server.url])
    const x = r.events.find((e) => e.path === 'x.txt')
    t.equal(x?.action, 'kept', `x.txt reported as kept, not ${x?.action}`)
    t.equal(r.code, 10, 'exit 10 (partial)')
    t.same(await readFile(join(work, 'x.txt'), 'utf8'), 'edited on the receiver', "the receiver's edit survives")
  })
}
