import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { TreeLock } from '../../src/sync/tree-lock.js'
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
