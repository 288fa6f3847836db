// Disk full (issue 7 item 10): two new 10 MiB files with 18 MiB free on the receiver — one is
// written, the other reported; once space is freed, the next run writes the other. The
// receiver's tree lives on a 24 MiB tmpfs (we run as root; where mount is not permitted the test
// says so and does nothing).
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, statfs, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { digestBytes } from '../../src/hash/index.js'
import { push } from '../../src/sync/index.js'
import { tempLeftovers, within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const run = promisify(execFile)
const MiB = 1024 * 1024

t.test('two 10 MiB files, 18 MiB free: one written, one reported; the next run writes the other', async (t) => {
  const mnt = await mkdtemp(join(tmpdir(), 'dsync-full-'))
  const mounted = await run('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mnt]).then(() => true, (err: Error) => {
    t.comment(`skipped: cannot mount a tmpfs here (${err.message.split('\n')[0]})`)
    return false
  })
  t.teardown(async () => {
    if (mounted) await run('umount', ['-l', mnt]).catch(() => undefined)
    await rm(mnt, { recursive: true, force: true })
  })
  if (!mounted) return
  const files = { 'one.bin': randomBytes(41, 10 * MiB), 'two.bin': randomBytes(42, 10 * MiB) }
  const home = await tempTree(t, files)
  const server = await startServer(t, mnt)
  // A first push of nothing creates the store, so what it takes is counted before the filler.
  const empty = await tempTree(t)
  await push(empty, server.url, clientOpts())
  const st = await statfs(mnt)
  const free = st.bavail * st.bsize
  const fillerSize = free - 18 * MiB
  t.ok(fillerSize > 0, `${(free / MiB).toFixed(1)} MiB free before the filler`)
  await writeFile(join(mnt, 'filler'), Buffer.alloc(fillerSize))
  const r1 = await within(30_000, 'the push onto a full disk', push(home, server.url, clientOpts())).then((x) => x.value, (err: Error) => err)
  const on = async (p: string) => readFile(join(mnt, p)).then(digestBytes, () => 'absent')
  const written = (await Promise.all(Object.entries(files).map(async ([p, c]) => (await on(p)) === digestBytes(c)))).filter(Boolean).length
  t.comment(`first run: ${r1 instanceof Error ? r1.message : JSON.stringify(r1.events.map((e) => [e.path, e.action, e.code]))}`)
  t.equal(written, 1, 'exactly one of the two files is written, whole')
  const errors = r1 instanceof Error ? [] : r1.events.filter((e) => e.action === 'error')
  t.equal(errors.length, 1, `the other is reported: ${r1 instanceof Error ? r1.message : JSON.stringify(errors.map((e) => [e.path, e.code, e.message]))}`)
  t.same(await tempLeftovers(mnt), [], 'no temp file holds the space')
  await rm(join(mnt, 'filler'))
  await within(30_000, 'the push with space freed', push(home, server.url, clientOpts()))
  for (const [p, c] of Object.entries(files)) t.equal(await on(p), digestBytes(c), `${p} is there after space was freed`)
})
