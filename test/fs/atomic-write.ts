import t from 'tap'
import { open, readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { writeAtomically } from '../../src/fs/index.js'
import { FLUSH_EVERY_BYTES } from '../../src/fs/atomic-write.js'
import { DsyncError } from '../../src/errors.js'
import { tempTree } from '../support/temp.js'

t.test('writes the whole file, with mode and mtime, and leaves no temp file', async (t) => {
  const dir = await tempTree(t, { 'f.txt': 'old' })
  const out = join(dir, 'f.txt')
  const r = await writeAtomically(
    out,
    async (sink) => {
      await sink.write(new TextEncoder().encode('new '))
      await sink.write(new TextEncoder().encode('content'))
      return 42
    },
    { mode: 0o640, mtimeMs: 1_600_000_000_000 },
  )
  t.equal(r, 42)
  t.equal(await readFile(out, 'utf8'), 'new content')
  const st = await stat(out)
  t.equal(st.mode & 0o777, 0o640)
  // In its millisecond, a few µs later at most (stableUtime: it must not read back in the one before).
  t.equal(Math.floor(st.mtimeMs), 1_600_000_000_000)
  t.ok(st.mtimeMs - 1_600_000_000_000 < 0.005, `${st.mtimeMs}`)
  t.same(await readdir(dir), ['f.txt'])
})

t.test('a small file written synchronously, replacing a file or not, whatever `replaces` says: the new content, its mode and mtime, no temp file', async (t) => {
  for (const [there, replaces] of [[true, true], [true, false], [false, true], [false, false]] as const) {
    const dir = await tempTree(t, there ? { 'f.txt': 'old content, longer' } : {})
    const out = join(dir, 'f.txt')
    await writeAtomically(out, (sink) => sink.write(new TextEncoder().encode(`new ${there} ${replaces}`)), { mode: 0o600, mtimeMs: 1_600_000_000_000, sizeHint: 16, replaces, syncDir: false })
    const what = `a file there: ${there}, replaces: ${replaces}`
    t.equal(await readFile(out, 'utf8'), `new ${there} ${replaces}`, what)
    const st = await stat(out)
    t.equal(st.mode & 0o777, 0o600, what)
    t.equal(Math.floor(st.mtimeMs), 1_600_000_000_000, what)
    t.same(await readdir(dir), ['f.txt'], what)
  }
})

t.test('an error mid-write leaves the old file intact and no temp file behind', async (t) => {
  const dir = await tempTree(t, { 'f.txt': 'old' })
  const out = join(dir, 'f.txt')
  await t.rejects(
    writeAtomically(out, async (sink) => {
      await sink.write(new Uint8Array(100000).fill(1))
      throw new DsyncError('DIGEST_MISMATCH', 'boom')
    }),
    { code: 'DIGEST_MISMATCH' },
  )
  t.equal(await readFile(out, 'utf8'), 'old')
  t.same(await readdir(dir), ['f.txt'])
})

t.test('an abort mid-write is ABORTED; the old file stays, the temp file goes', async (t) => {
  const dir = await tempTree(t, { 'f.txt': 'old' })
  const out = join(dir, 'f.txt')
  const ac = new AbortController()
  await t.rejects(
    writeAtomically(
      out,
      async (sink) => {
        await sink.write(new Uint8Array(10))
        ac.abort()
        await sink.write(new Uint8Array(10))
      },
      { signal: ac.signal },
    ),
    { code: 'ABORTED' },
  )
  t.equal(await readFile(out, 'utf8'), 'old')
  t.same(await readdir(dir), ['f.txt'])
})

t.test('creates a new file; a missing directory is NOT_FOUND, a directory in the way is NOT_A_FILE', async (t) => {
  const dir = await tempTree(t, { 'sub/x': 'x' })
  await writeAtomically(join(dir, 'new.bin'), async (sink) => sink.write(new Uint8Array([1, 2, 3])))
  t.same([...(await readFile(join(dir, 'new.bin')))], [1, 2, 3])
  await t.rejects(writeAtomically(join(dir, 'nope', 'f'), async () => undefined), { code: 'NOT_FOUND' })
  await t.rejects(writeAtomically(join(dir, 'sub'), async () => undefined), { code: 'NOT_A_FILE', message: /is a directory/ })
  t.same((await readdir(dir)).sort(), ['new.bin', 'sub'])
})

t.test('a file of several flush intervals (FLUSH_EVERY_BYTES each, flushed while written) is whole; an error with a flush under way leaves the old file and no temp file', async (t) => {
  const dir = await tempTree(t, { 'f.bin': 'old' })
  const out = join(dir, 'f.bin')
  const piece = new Uint8Array(1024 * 1024)
  const interval = FLUSH_EVERY_BYTES / piece.length
  const pieces = 2 * interval + 3
  // FileHandle's prototype, to count and fail its datasync calls.
  const probe = await open(out, 'r')
  const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> }
  await probe.close()
  const datasync = proto.datasync
  t.teardown(() => void (proto.datasync = datasync))
  let flushes = 0
  proto.datasync = function (this: unknown) {
    flushes++
    return datasync.call(this)
  }
  await writeAtomically(out, async (sink) => {
    for (let i = 0; i < pieces; i++) {
      piece.fill(i & 0xff)
      await sink.write(piece)
    }
  })
  const back = await readFile(out)
  t.equal(back.length, pieces * piece.length)
  t.ok([0, interval - 1, interval, interval + 1, 2 * interval, pieces - 1].every((i) => back[i * piece.length] === i && back[(i + 1) * piece.length - 1] === i), 'every piece where it was written')
  t.same(await readdir(dir), ['f.bin'])
  t.ok(flushes >= 1 && flushes <= 2, `flushed while written (${flushes} of 2 intervals; one at a time)`)
  await t.rejects(
    writeAtomically(out, async (sink) => {
      for (let i = 0; i <= interval; i++) await sink.write(piece) // a flush starts after `interval` pieces
      throw new DsyncError('DIGEST_MISMATCH', 'boom')
    }),
    { code: 'DIGEST_MISMATCH' },
  )
  t.equal((await stat(out)).size, pieces * piece.length, 'the old file as it was')
  t.same(await readdir(dir), ['f.bin'], 'no temp file')
})

t.test('a flush that fails fails the write: IO, the old file intact, no temp file', async (t) => {
  const dir = await tempTree(t, { 'f.bin': 'old' })
  const out = join(dir, 'f.bin')
  const probe = await open(out, 'r')
  const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> }
  await probe.close()
  const datasync = proto.datasync
  t.teardown(() => void (proto.datasync = datasync))
  proto.datasync = () => Promise.reject(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', syscall: 'fdatasync' }))
  const piece = new Uint8Array(1024 * 1024)
  await t.rejects(writeAtomically(out, async (sink) => {
    for (let i = 0; i < 100; i++) await sink.write(piece)
  }), { code: 'IO', message: /EIO/ })
  t.equal(await readFile(out, 'utf8'), 'old')
  t.same(await readdir(dir), ['f.bin'], 'no temp file')
})
