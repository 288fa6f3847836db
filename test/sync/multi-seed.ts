import t, { type Test } from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { push } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const KiB = 1024

/** Pushes lib/a.bin and lib/b.bin, then made.bin (made of their pieces), and checks it came
 *  exactly, as a delta from a with b as a second seed; the second push and made.bin's event. */
async function pushMadeOfTwo(t: Test, a: Uint8Array, b: Uint8Array, made: Uint8Array) {
  const home = await tempTree(t, { 'lib/a.bin': a, 'lib/b.bin': b })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  await writeFile(join(home, 'made.bin'), made)
  const r = await push(home, server.url, clientOpts())
  t.ok((await readFile(join(work, 'made.bin'))).equals(made), 'written exactly')
  const e = r.events.find((x) => x.path === 'made.bin')
  t.match(e, { action: 'delta', seed: 'lib/a.bin', message: /lib\/b\.bin as a second seed/ }, 'from a, with b as a second seed')
  return { r, e }
}

t.test('a new file made of pieces of two files the server has copies from both (a delta from two seeds)', async (t) => {
  const a = randomBytes(41, 1024 * KiB)
  const b = randomBytes(42, 1024 * KiB)
  // 600 KiB of a, then 400 KiB of b, then 100 KiB new: a alone supplies 54% of it, b 36%.
  const made = Buffer.concat([a.subarray(100 * KiB, 700 * KiB), b.subarray(300 * KiB, 700 * KiB), randomBytes(43, 100 * KiB)])
  const { r, e } = await pushMadeOfTwo(t, a, b, made)
  t.ok((e?.copiedBytes ?? 0) >= 950 * KiB, `${e?.copiedBytes} bytes copied: both pieces`)
  t.ok((e?.literalBytes ?? Infinity) <= 160 * KiB, `${e?.literalBytes} bytes of literal: the new 100 KiB and a block at each edge (one seed: 500 KiB)`)
  t.ok(r.summary.wireBytesSent < 170 * KiB, `${r.summary.wireBytesSent} bytes sent for a ${made.length}-byte file`)
})

t.test('two small seeds (read once, whole, and held: HELD_SEED_BYTES) give the same delta from both', async (t) => {
  const a = randomBytes(61, 128 * KiB)
  const b = randomBytes(62, 128 * KiB)
  // All of a, 96 KiB of b, 16 KiB new: 256 KiB of seeds in all, as much as is held.
  const { e } = await pushMadeOfTwo(t, a, b, Buffer.concat([a, b.subarray(16 * KiB, 112 * KiB), randomBytes(63, 16 * KiB)]))
  // Held bytes that were not the seeds' would fail the digest, and the file would come whole.
  t.ok((e?.copiedBytes ?? 0) >= 200 * KiB, `${e?.copiedBytes} bytes copied: both pieces`)
  t.ok((e?.literalBytes ?? Infinity) <= 40 * KiB, `${e?.literalBytes} bytes of literal: the new 16 KiB and the pieces' edges`)
})

t.test('two pieces, neither similar enough alone: the pair passes the rule, and the file goes as a delta', async (t) => {
  const a = randomBytes(51, 512 * KiB)
  const b = randomBytes(52, 512 * KiB)
  const home = await tempTree(t, { 'a.bin': a, 'b.bin': b })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  // 320 KiB of each and 200 KiB new: each alone supplies 320 of 840 KiB, dice 2 × 320 / (840 +
  // 512) = 0.47, under the 0.5 rule; the pair 2 × 640 / (840 + 1024) = 0.69 (a little less on
  // chunks, whose edges straddle the pieces).
  const made = Buffer.concat([a.subarray(0, 320 * KiB), b.subarray(0, 320 * KiB), randomBytes(53, 200 * KiB)])
  await writeFile(join(home, 'made.bin'), made)
  const r = await push(home, server.url, clientOpts({ dryRun: true }))
  const e = r.events.find((x) => x.path === 'made.bin')
  t.match(e, { action: 'delta', message: /as a second seed/ }, 'a delta from the pair (dry run: decided, not sent)')
  t.ok((e?.similarity ?? 0) > 0.55, `similarity ${e?.similarity} of the pair`)
  t.ok(e?.candidates?.every((c) => c.similarity < 0.5), `each alone under the rule: ${JSON.stringify(e?.candidates)}`)
})
