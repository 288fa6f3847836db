import t from 'tap'
import { DsyncError } from '../../src/errors.js'
import { ByteQueue } from '../../src/sync/byte-queue.js'
import { Semaphore } from '../../src/sync/limit.js'
import { SessionScope } from '../../src/sync/session-scope.js'

const never = (signal: AbortSignal): Promise<void> =>
  new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))

t.test('the first failing task aborts the signal every other task waits on; settled() rethrows it', async (t) => {
  const failures: unknown[] = []
  const scope = new SessionScope(new AbortController().signal, (err) => failures.push(err))
  let otherStopped = false
  scope.spawn(async () => {
    await never(scope.signal).catch(() => (otherStopped = true))
  })
  scope.spawn(async () => {
    throw new DsyncError('IO', 'disk gone')
  })
  await t.rejects(scope.settled(), { code: 'IO', message: 'disk gone' })
  t.ok(otherStopped, 'the waiting task ended with the session')
  t.ok(scope.signal.aborted)
  t.equal(failures.length, 1, 'onFailure called once')
  t.equal(scope.size, 0, 'no task left running')
})

t.test("the parent's abort (Ctrl+C, shutdown) ends the session's waits", async (t) => {
  const parent = new AbortController()
  const scope = new SessionScope(parent.signal)
  const q = new ByteQueue(scope.signal, 4)
  const slots = new Semaphore(1, scope.signal)
  let consumed: unknown
  scope.spawn(async () => {
    try {
      for await (const _ of q) void _
    } catch (err) {
      consumed = err
    }
  })
  const holder = slots.with(() => never(scope.signal))
  const waiter = slots.with(async () => 'ran')
  parent.abort(new DsyncError('ABORTED', 'Ctrl+C'))
  await t.rejects(waiter, { code: 'ABORTED' }, 'a semaphore waiter is released with the abort')
  await t.rejects(holder, { code: 'ABORTED' })
  await t.rejects(scope.settled(), { code: 'ABORTED' })
  t.match(consumed, { code: 'ABORTED' }, 'a queue consumer sees the abort')
  await q.push(new Uint8Array(10)) // returns at once, dropped: nothing listens any more
  t.equal(q.queuedBytes, 0)
})

t.test('a task spawned after the end does not run', async (t) => {
  const parent = new AbortController()
  parent.abort()
  const scope = new SessionScope(parent.signal)
  let ran = false
  scope.spawn(async () => {
    ran = true
  })
  await t.rejects(scope.settled())
  t.notOk(ran)
})

t.test('ByteQueue: push waits over the high-water mark until the consumer takes', async (t) => {
  const q = new ByteQueue(new AbortController().signal, 8)
  await q.push(new Uint8Array(10)) // over the mark now
  let second = false
  const p = q.push(new Uint8Array(3)).then(() => (second = true))
  await new Promise((r) => setImmediate(r))
  t.notOk(second, 'the producer waits')
  const it = q[Symbol.asyncIterator]()
  t.equal((await it.next()).value?.length, 10)
  await p
  t.ok(second, 'taking wakes the producer')
  q.end()
  t.equal((await it.next()).value?.length, 3)
  t.ok((await it.next()).done)
})

t.test('a task that throws before its first await fails the session, not the process', async (t) => {
  const scope = new SessionScope(new AbortController().signal)
  scope.spawn(() => {
    throw new DsyncError('IO', 'thrown at once')
  })
  await t.rejects(scope.settled(), { code: 'IO', message: 'thrown at once' })
  t.ok(scope.signal.aborted, 'and every other task of it is told')
})
