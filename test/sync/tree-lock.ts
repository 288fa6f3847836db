import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { moveAsideIfDead, TreeLock } from '../../src/sync/tree-lock.js'
import { tempTree } from '../support/temp.js'

/** Another process that takes the tree's lock and keeps it until killed; resolves once it holds it. */
async function otherProcessHolds(t: Test, root: string): Promise<ChildProcess> {
  const lockModule = new URL('../../src/sync/tree-lock.js', import.meta.url).href
  const holder = spawn(process.execPath, ['--input-type=module', '-e', `
    const { TreeLock } = await import(${JSON.stringify(lockModule)})
    await new TreeLock(${JSON.stringify(root)}).hold(() => () => {}, new AbortController().signal, async () => {
      console.log('held'); await new Promise(() => setInterval(() => {}, 1000))
    })`])
  t.teardown(() => void holder.kill('SIGKILL'))
  await new Promise<void>((r) => holder.stdout!.once('data', () => r()))
  return holder
}

t.test('sessions on one tree run one at a time, in order; a waiting one is told once', async (t) => {
  const root = await tempTree(t)
  const lock = new TreeLock(root)
  const order: string[] = []
  const waits: string[] = []
  let releaseFirst!: () => void
  const signal = new AbortController().signal
  const first = lock.hold(() => () => undefined, signal, async () => {
    order.push('first in')
    await new Promise<void>((r) => (releaseFirst = r))
    order.push('first out')
  })
  await new Promise((r) => setImmediate(r))
  const second = lock.hold(() => (waits.push('second waits'), () => waits.push('second goes')), signal, async () => {
    order.push('second in')
  })
  await new Promise((r) => setTimeout(r, 50))
  t.same(order, ['first in'], 'the second waits')
  releaseFirst()
  await Promise.all([first, second])
  t.same(order, ['first in', 'first out', 'second in'])
  t.same(waits, ['second waits', 'second goes'])
})

t.test('another process holds the tree: wait for it; its lock after a kill -9 is taken over', async (t) => {
  const root = await tempTree(t)
  const holder = await otherProcessHolds(t, root)
  let waited = false
  let ran = false
  const mine = new TreeLock(root).hold(() => ((waited = true), () => undefined), new AbortController().signal, async () => {
    ran = true
  })
  await new Promise((r) => setTimeout(r, 600))
  t.ok(waited && !ran, 'waits while the other process holds the tree')
  holder.kill('SIGKILL')
  await mine
  t.ok(ran, 'runs once the holder died')
})

t.test('a lock left by a process that died is taken over at once: no wait, no waiting notice', async (t) => {
  const root = await tempTree(t)
  const holder = await otherProcessHolds(t, root)
  holder.kill('SIGKILL')
  await new Promise<void>((r) => holder.once('exit', () => r()))
  let waited = false
  let ran = false
  await new TreeLock(root).hold(() => ((waited = true), () => undefined), new AbortController().signal, async () => {
    ran = true
  })
  t.ok(ran, 'runs')
  t.notOk(waited, 'without waiting for the dead holder, nor saying it waits')
})

t.test('an abort ends the wait', async (t) => {
  const root = await tempTree(t)
  const lock = new TreeLock(root)
  let release!: () => void
  const signal = new AbortController().signal
  let held!: () => void
  const holding = new Promise<void>((r) => (held = r))
  const first = lock.hold(() => () => undefined, signal, () => new Promise<void>((r) => ((release = r), held())))
  await holding
  const ac = new AbortController()
  const other = new TreeLock(root).hold(() => () => undefined, ac.signal, async () => 'ran')
  setTimeout(() => ac.abort(), 100)
  await t.rejects(other, { name: 'AbortError' })
  release()
  await first
})

t.test('taking over a dead owner\'s lock: moved aside, and a live session\'s lock read by a slower waiter as the dead one\'s is put back', async (t) => {
  const dir = await tempTree(t)
  const file = join(dir, 'tree.lock')
  const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'])
  t.teardown(() => void live.kill('SIGKILL'))
  const dead = spawn(process.execPath, ['-e', '0'])
  await new Promise<void>((r) => dead.once('exit', () => r()))
  const leftovers = async () => (await readdir(dir)).filter((n) => n !== 'tree.lock')

  await writeFile(file, String(dead.pid))
  t.equal(await moveAsideIfDead(file), true, 'a dead owner\'s lock: taken over')
  t.same(await readdir(dir), [], 'and removed, nothing left aside')
  t.equal(await moveAsideIfDead(file), false, 'gone already (another waiter moved it): not taken now, looked at again later')

  // What a slower waiter meets: it read the dead owner's pid, but the faster one has removed
  // that lock and made its own since.
  await writeFile(file, String(live.pid))
  t.equal(await moveAsideIfDead(file), false, 'a live session\'s lock: not taken')
  t.equal(await readFile(file, 'utf8'), String(live.pid), 'and put back as it was')
  t.same(await leftovers(), [], 'nothing left aside')

  await writeFile(file, '')
  t.equal(await moveAsideIfDead(file), false, 'a lock being written (no pid yet): not taken')
  t.equal(await readFile(file, 'utf8'), '', 'and put back')

  await writeFile(file, String(live.pid))
  const [a, b] = await Promise.all([moveAsideIfDead(file), moveAsideIfDead(file)])
  t.same([a, b], [false, false], 'two at once on a live lock: neither takes it (the one that finds it moved looks again later)')
  t.equal(await readFile(file, 'utf8'), String(live.pid), 'and it is there after both')
  t.same(await leftovers(), [], 'nothing left aside')
})
