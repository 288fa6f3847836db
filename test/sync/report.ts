import t from 'tap'
import { SyncReport } from '../../src/sync/index.js'

t.test('the summary counts each kind of event and the bytes behind them', async (t) => {
  const seen: string[] = []
  const progress: [number, number][] = []
  const r = new SyncReport((e) => seen.push(e.action), (done, total) => progress.push([done, total]))
  for (const size of [100, 200, 300, 400, 500]) r.countFiles(1, size)
  r.add({ path: 'a', action: 'delta', seed: 'a', similarity: 0.9, size: 100, copiedBytes: 90, literalBytes: 10 })
  r.add({ path: 'b', action: 'new', size: 200, copiedBytes: 0, literalBytes: 200 })
  r.add({ path: 'c', action: 'copy', seed: 'x', size: 300 })
  r.add({ path: 'd', action: 'unchanged', size: 400 })
  r.add({ path: 'e', action: 'kept', code: 'CHANGED_ON_RECEIVER', size: 500 })
  r.add({ path: 'gone', action: 'deleted' })
  r.countScan(2)
  const s = r.summary({ bytesSent: 700, bytesReceived: 300 }, 42)
  t.match(s, { files: 5, transferred: 2, copied: 1, unchanged: 1, deleted: 1, conflicts: 1, errors: 0, filesRead: 2 })
  t.match(s, { totalBytes: 1500, matchedBytes: 90, literalBytes: 210, wireBytesSent: 700, wireBytesReceived: 300, durationMs: 42 })
  t.equal(s.speedup, 1.5, 'total size ÷ bytes on the wire both ways')
  t.same(seen, ['delta', 'new', 'copy', 'unchanged', 'kept', 'deleted'])
  t.same(progress.at(-1), [1500, 1500], 'progress ends with every listed byte settled')
})

t.test('keepUnchanged false: unchanged events are counted and seen, not kept; every other event is', async (t) => {
  const seen: string[] = []
  const r = new SyncReport((e) => seen.push(`${e.action} ${e.path}`), undefined, false)
  for (const size of [1, 2, 3, 4]) r.countFiles(1, size)
  r.add({ path: 'a', action: 'unchanged', size: 1 })
  r.add({ path: 'b', action: 'new', size: 2, copiedBytes: 0, literalBytes: 2 })
  r.add({ path: 'c', action: 'unchanged', size: 3 })
  r.add({ path: 'd', action: 'error', code: 'NOT_FOUND', message: 'gone' })
  t.same(r.events.map((e) => e.path), ['b', 'd'], 'kept: all but the unchanged ones')
  t.same(seen, ['unchanged a', 'new b', 'unchanged c', 'error d'], 'onEvent sees every event')
  const s = r.summary({ bytesSent: 0, bytesReceived: 0 }, 0)
  t.match(s, { files: 4, unchanged: 2, transferred: 1, errors: 1 })
  const kept = new SyncReport()
  kept.add({ path: 'a', action: 'unchanged', size: 1 })
  t.equal(kept.events.length, 1, 'kept by default')
  t.equal(kept.summary({ bytesSent: 0, bytesReceived: 0 }, 0).unchanged, 1)
})
