import t from 'tap'
import { formatOutcome, formatSummary, plural } from '../../src/cli/output.js'
import type { SyncSummary } from '../../src/sync/index.js'

const base: SyncSummary = {
  files: 11, transferred: 6, copied: 2, moved: 0, unchanged: 3, deleted: 2, conflicts: 0, errors: 0,
  totalBytes: 4_000_000, matchedBytes: 3_000_000, literalBytes: 100_000,
  wireBytesSent: 90_000, wireBytesReceived: 10_000, speedup: 40, durationMs: 1234, filesRead: 5,
}

t.test('--stats: the parts of "files" add up to the total, deletions apart', async (t) => {
  const text = formatSummary(base)
  t.match(text, /^files +11 \(6 transferred, 2 copied locally, 3 unchanged\)$/m)
  t.match(text, /^deleted +2 /m)
  const withConflict = formatSummary({ ...base, transferred: 5, conflicts: 1 })
  t.match(withConflict, /^files +11 \(5 transferred, 2 copied locally, 3 unchanged, 1 conflict\)$/m)
  const failed = formatSummary({ ...base, transferred: 4, errors: 2 })
  t.match(failed, /^files +11 \(4 transferred, 2 copied locally, 3 unchanged, 2 failed\)$/m)
  const moved = formatSummary({ ...base, transferred: 4, moved: 2 })
  t.match(moved, /^files +11 \(4 transferred, 2 copied locally, 2 moved, 3 unchanged\)$/m, 'moved files are neither failed nor copied')
})

t.test('--stats: a no-op prints the bytes on the wire, not a meaningless speedup', async (t) => {
  const noop = { ...base, transferred: 0, copied: 0, unchanged: 11, deleted: 0, wireBytesSent: 500, wireBytesReceived: 323, speedup: 4860 }
  const text = formatSummary(noop)
  t.notMatch(text, /4860/)
  t.match(text, /^speedup +none to measure: nothing changed, 823 B on the wire/m)
  t.match(formatSummary(base), /^speedup +40\.0×/m)
})

t.test('--stats: "files read" says it counts this side', async (t) => {
  t.match(formatSummary(base), /^files read +5 on this side/m)
})

t.test('counts are pluralized: "1 file", not "1 files"', async (t) => {
  t.equal(plural(1, 'file'), '1 file')
  t.equal(plural(0, 'file'), '0 files')
  t.match(formatOutcome({ ...base, transferred: 1, copied: 0, deleted: 0, errors: 1 }, false), /^1 file transferred, 1 error; /)
  t.match(formatOutcome({ ...base, transferred: 2 }, true), /^2 files transferred, 2 copied locally, 2 deleted; .*\(dry run: nothing changed\)$/m)
  t.match(formatOutcome({ ...base, transferred: 0, copied: 0, moved: 3, deleted: 0 }, false), /^0 files transferred, 3 moved; /)
})
