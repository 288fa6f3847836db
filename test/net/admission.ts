import t from 'tap'
import { Admission, type Slot } from '../../src/net/admission.js'

const slot = (s: Slot | string): Slot => {
  if (typeof s === 'string') throw new Error(`refused: ${s}`)
  return s
}

t.test('pending connections are capped in total and per address; a release frees exactly one slot', async (t) => {
  const logs: string[] = []
  const a = new Admission({ maxPendingHandshakes: 3, maxPendingPerAddress: 2, maxSessions: 1 }, (l) => logs.push(l))
  t.teardown(() => a.stop())
  const x1 = slot(a.admitConnection('10.0.0.1'))
  slot(a.admitConnection('10.0.0.1'))
  t.match(a.admitConnection('10.0.0.1'), /2 connections from 10\.0\.0\.1 are waiting/, 'per address')
  slot(a.admitConnection('10.0.0.2'))
  t.match(a.admitConnection('10.0.0.3'), /3 connections are waiting to authenticate, the most this server allows/, 'in total')
  t.equal(a.pendingHandshakes, 3)
  x1.release()
  x1.release()
  t.equal(a.pendingHandshakes, 2, 'a second release is a no-op')
  t.type(a.admitConnection('10.0.0.1'), 'object', 'the freed slot is both the total\'s and the address\'s')
})

t.test('sessions are capped; a released session slot is admitted again', async (t) => {
  const a = new Admission({ maxPendingHandshakes: 1, maxPendingPerAddress: 1, maxSessions: 2 }, () => {})
  t.teardown(() => a.stop())
  const s1 = slot(a.admitSession())
  slot(a.admitSession())
  t.match(a.admitSession(), /the server is busy: 2 sessions are open/)
  t.equal(a.activeSessions, 2)
  s1.release()
  t.equal(a.activeSessions, 1)
  t.type(a.admitSession(), 'object')
})

t.test('a burst of refusals is logged once with its reason, then as a count', async (t) => {
  const logs: string[] = []
  const a = new Admission({ maxPendingHandshakes: 0, maxPendingPerAddress: 0, maxSessions: 0 }, (l) => logs.push(l))
  for (let i = 0; i < 2000; i++) a.admitConnection(`10.0.${i >> 8}.${i & 255}`)
  t.equal(logs.length, 1, '2,000 refusals, one line')
  t.match(logs[0], /^refusing connections: 0 connections are waiting to authenticate.*counted, not logged/)
  a.stop()
  t.strictSame(logs.slice(1), ['refused 1999 more connections over the cap in the last 10 s or less'], 'the count, flushed at stop')
})
