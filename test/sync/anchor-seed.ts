import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { sketchBytes } from '../../src/similarity/index.js'
import { probeAnchorKeys } from '../../src/store/index.js'
import { push } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const KiB = 1024

/** `base` with a small edit (a few random bytes replaced) every `every` bytes. */
function scattered(base: Uint8Array, every: number, seed: number): Buffer {
  const out = Buffer.from(base)
  const noise = randomBytes(seed, Math.ceil(base.length / every) * 8)
  for (let at = every / 2, k = 0; at < out.length - 8; at += every, k++) out.set(noise.subarray(k * 8, k * 8 + 8), at)
  return out
}

t.test('probe anchors: distinct posting keys, the highest-level anchors first, most kept through scattered edits', async (t) => {
  const base = randomBytes(61, 256 * KiB)
  const keys = probeAnchorKeys(sketchBytes(base), 8)
  t.equal(keys.length, 8)
  t.equal(new Set(keys).size, 8, 'distinct')
  const edited = probeAnchorKeys(sketchBytes(scattered(base, 2000, 62)), 8)
  const kept = edited.filter((k) => keys.includes(k)).length
  t.ok(kept >= 5, `${kept} of 8 anchors kept through an 8-byte edit every 2,000 bytes`)
  t.same(probeAnchorKeys(sketchBytes(base), 3), keys.slice(0, 3), 'fewer: the first of the same order')
})

t.test('a new file at an unrelated path, edited every 2 KB from a file the server has: found by its anchors, sent as a delta', async (t) => {
  const base = randomBytes(71, 300 * KiB)
  const files: Record<string, Uint8Array> = { 'lib/base.bin': base }
  for (let i = 0; i < 40; i++) files[`noise/n${i}.bin`] = randomBytes(100 + i, 20 * KiB)
  const home = await tempTree(t, files)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  // No whole 8 KiB chunk survives an edit every 2 KB: the chunk index cannot see it.
  const made = scattered(base, 2048, 72)
  await writeFile(join(home, 'elsewhere.bin'), made)
  const r = await push(home, server.url, clientOpts())
  t.ok((await readFile(join(work, 'elsewhere.bin'))).equals(made), 'written exactly')
  const e = r.events.find((x) => x.path === 'elsewhere.bin')
  t.match(e, { action: 'delta', seed: 'lib/base.bin' }, `from its base: ${e?.message ?? ''}`)
  t.ok((e?.literalBytes ?? Infinity) < 60 * KiB, `${e?.literalBytes} bytes of literal for ${made.length} (whole: all of it)`)
})

t.test('in place: a file edited every 2 KB shares no whole chunk with its old version, and still goes as a delta from it', async (t) => {
  const base = randomBytes(81, 300 * KiB)
  const home = await tempTree(t, { 'doc.bin': base })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  const made = scattered(base, 2048, 82)
  await writeFile(join(home, 'doc.bin'), made)
  const r = await push(home, server.url, clientOpts())
  t.ok((await readFile(join(work, 'doc.bin'))).equals(made), 'written exactly')
  const e = r.events.find((x) => x.path === 'doc.bin')
  t.match(e, { action: 'delta', seed: 'doc.bin' }, `from its old version: ${e?.message ?? ''}`)
  t.ok((e?.literalBytes ?? Infinity) < 60 * KiB, `${e?.literalBytes} bytes of literal for ${made.length}`)
})
