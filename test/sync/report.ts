import t from 'tap'
import { SyncReport, type FileEvent } from '../../src/sync/index.js'

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

t.test('kept events: all, all but unchanged, or the exceptions alone; every one counted and seen', async (t) => {
  const events = [
    { path: 'a', action: 'unchanged', size: 1 },
    { path: 'b', action: 'new', size: 2, copiedBytes: 0, literalBytes: 2 },
    { path: 'c', action: 'unchanged', size: 3 },
    { path: 'd', action: 'error', code: 'NOT_FOUND', message: 'gone' },
    { path: 'e', action: 'delta', seed: 'x', similarity: 0.8, size: 4, copiedBytes: 3, literalBytes: 1 },
    { path: 'f', action: 'kept', code: 'CHANGED_ON_RECEIVER', size: 5 },
    { path: 'g', action: 'conflict', conflictCopy: 'g.c', size: 6 },
    { path: 'h', action: 'deleted' },
    { path: 'i', action: 'meta', size: 7 },
  ] as const satisfies readonly FileEvent[]
  for (const [keep, kept] of [
    ['all', 'abcdefghi'],
    ['changed', 'bdefghi'],
    ['exceptions', 'dfgh'],
  ] as const) {
    const seen: string[] = []
    const r = new SyncReport((e) => seen.push(e.path), undefined, keep)
    r.countFiles(7, 28)
    for (const e of events) r.add(e)
    r.countUnchanged(10, 100)
    t.equal(r.events.map((e) => e.path).join(''), kept, `${keep}: ${kept} kept`)
    t.equal(seen.join(''), 'abcdefghi', `${keep}: onEvent sees every event`)
    t.match(r.summary({ bytesSent: 0, bytesReceived: 0 }, 0), {
      files: 7, transferred: 2, copied: 0, unchanged: 13, deleted: 1, conflicts: 2, errors: 1, matchedBytes: 3, literalBytes: 3,
    }, `${keep}: the same summary`)
  }
  t.equal(new SyncReport(undefined, undefined, 'changed').wantsEachUnchanged, false, 'unchanged files may be counted in bulk when not kept nor seen')
  t.equal(new SyncReport(() => undefined, undefined, 'exceptions').wantsEachUnchanged, true, 'but not when each is seen')
})

t.test("moved files: a listed file renamed here counts; a two-way sync's rename (it has a side) is in its plan, not its files", async (t) => {
  const r = new SyncReport()
  r.countFiles(1, 10)
  r.add({ path: 'new/a', action: 'moved', seed: 'old/a', size: 10 })
  r.add({ path: 'b', action: 'moved', seed: 'c', side: 'local' })
  const s = r.summary({ bytesSent: 0, bytesReceived: 0 }, 1)
  t.equal(s.moved, 1)
  t.equal(s.files, 1)
  t.equal(r.events.length, 2, 'both kept as events')
})
