// A file rewritten in place while it is sent (issue 7 item 8) never arrives mixed: the
// receiver's file is the old one or exactly one complete version the sender had. A concurrent
// process rewrites a 50 MiB file block by block (from the end backwards: the sender, reading
// forwards, would meet old bytes first and new ones last; or from the start) as soon as the
// push has sent its first data.
import t from 'tap'
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { digestBytes } from '../../src/hash/index.js'
import { push } from '../../src/sync/index.js'
import { WINDOWED_PROBE_BYTES } from '../../src/sync/probe.js'
import { within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const MiB = 1024 * 1024

/** A separate process that copies `from` over `to` in place, 1 MiB at a time. */
const REWRITER = `
const fs = require('node:fs')
const [from, to, dir] = process.argv.slice(1)
const a = fs.openSync(from, 'r'), b = fs.openSync(to, 'r+')
const size = fs.fstatSync(a).size, block = 1 << 20, buf = Buffer.alloc(block)
const n = Math.ceil(size / block)
for (let k = 0; k < n; k++) {
  const i = dir === 'backward' ? n - 1 - k : k
  const len = fs.readSync(a, buf, 0, block, i * block)
  fs.writeSync(b, buf, 0, len, i * block)
}
fs.closeSync(b)
`

// 50 MiB goes with its chunk list (its SHA-256 known before it is sent); a file over 64 MiB is
// probed by windows and sent whole, checked with XXH3-128 (PROTOCOL.md §4.11): only the stat
// taken before and after the read tells that it changed.
for (const { size, direction, how } of [
  { size: 50 * MiB, direction: 'backward', how: 'with its list' },
  { size: WINDOWED_PROBE_BYTES + 2 * MiB, direction: 'backward', how: 'whole, checked with XXH3-128' },
] as const) {
  t.test(`a ${Math.round(size / MiB)} MiB file (${how}) rewritten ${direction} while it is pushed arrives whole or not at all`, async (t) => {
    const v1 = randomBytes(31, size)
    const v2 = randomBytes(32, size)
    const home = await tempTree(t, { 'big.bin': v1, 'small.txt': 'small' })
    const spare = await tempTree(t, { 'v2.bin': v2 })
    const work = await tempTree(t)
    const log: string[] = []
    const server = await startServer(t, work, { log })
    let rewriter: Promise<number | null> | undefined
    const onBytes = (): void => {
      rewriter ??= new Promise((resolve) => {
        const child = spawn(process.execPath, ['-e', REWRITER, join(spare, 'v2.bin'), join(home, 'big.bin'), direction], { stdio: 'ignore' })
        child.on('exit', (code) => resolve(code))
      })
    }
    const r = await within(60_000, 'the push', push(home, server.url, clientOpts({ onBytes }))).then((x) => x.value, (err: Error & { code?: string }) => err)
    t.equal(await rewriter, 0, 'the rewriter ran to the end')
    const got = await readFile(join(work, 'big.bin')).then(digestBytes, () => 'absent')
    const allowed = new Map([[digestBytes(v1), 'v1'], [digestBytes(v2), 'v2'], ['absent', 'absent (the old state)']])
    t.ok(allowed.has(got), `big.bin on the receiver is ${allowed.get(got) ?? 'MIXED: a state the sender never had'}`)
    const events = r instanceof Error ? [] : r.events.filter((e) => e.path === 'big.bin')
    t.comment(`run: ${r instanceof Error ? `${r.code}: ${r.message}` : JSON.stringify(events.map((e) => [e.action, e.code, e.message]))}; server: ${log.join(' | ')}`)
    if (got === 'absent') t.ok(r instanceof Error || events.some((e) => e.action === 'error'), 'not delivered: the run reports an error for it')
    t.same(await readFile(join(work, 'small.txt'), 'utf8'), 'small', 'the other file is synced')
    await push(home, server.url, clientOpts())
    t.equal(await readFile(join(work, 'big.bin')).then(digestBytes), digestBytes(v2), 'the next push delivers the new version')
  })
}
