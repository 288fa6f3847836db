import t from 'tap'
import { SyncReport } from '../../src/sync/index.js'

t.test('the summary counts each kind of event and the bytes behind them', async (t) => {
  const seen: string[] = []
  const progress: [number, number][] = []
  const r = new SyncReport((e) => seen.push(e.action), (done, total) => progress.push([done, total]))
  for (const size of [100, 200, 300, 400, 500]) r.countFile(size)
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
