import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { decode, encode } from '../../src/net/index.js'
import { push } from '../../src/sync/index.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, startServer } from '../support/sync.js'

/** ~135 KB of source lines, seeded. */
function sourceLines(): string[] {
  let x = 1
  const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648
  return Array.from({ length: 2500 }, (_, i) => `  const v${i} = compute(${Math.floor(rnd() * 1e6)}, "${Math.floor(rnd() * 1e9).toString(36)}") // line ${i}`)
}

t.test('a file with edits scattered over most of its chunks is measured on the bytes and goes as a delta (by its matches; by sketch in a dry run)', async (t) => {
  const lines = sourceLines()
  const home = await tempTree(t, { 'src.ts': lines.join('\n') })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  // 12 one-line edits, one every ~11 KB: nearly every 8 KiB chunk changes, 99% of the bytes stay.
  for (let i = 100; i < 2500; i += 200) lines[i] += ' // edited'
  await writeFile(join(home, 'src.ts'), lines.join('\n'))
  // A dry run exchanges no data: the sketches measure it.
  const dry = await push(home, server.url, clientOpts({ dryRun: true }))
  const d = dry.events.find((x) => x.path === 'src.ts')
  t.match(d, { action: 'delta', seed: 'src.ts', message: /measured by sketch/ }, 'dry run: a delta, decided by the sketch')
  t.ok(d!.similarity! > 0.95, `the sketch sees the truth (~0.99): ${d!.similarity}`)
  const r = await push(home, server.url, clientOpts())
  const e = r.events.find((x) => x.path === 'src.ts')
  t.match(e, { action: 'delta', seed: 'src.ts', message: 'measured by matching' }, 'a delta from its earlier version, decided by what its refinement rounds matched')
  t.ok(e!.similarity! > 0.95, `the matches see the truth (~0.99): ${e!.similarity}`)
  const wire = r.summary.wireBytesSent + r.summary.wireBytesReceived
  t.ok(wire < 8_000, `${wire} bytes on the wire for 12 line edits (sent whole it was ~38 KB; with a sketch ~12 KB)`)
  t.equal(await readFile(join(work, 'src.ts'), 'utf8'), lines.join('\n'), 'rebuilt exactly')
})

t.test('an unrelated rewrite stays whole: its matches say so, and it comes as literals only', async (t) => {
  const home = await tempTree(t, { 'data.txt': sourceLines().join('\n') })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  const rewritten = sourceLines().map((l) => l.split('').reverse().join('')).join('\n')
  await writeFile(join(home, 'data.txt'), rewritten)
  const dry = await push(home, server.url, clientOpts({ dryRun: true }))
  t.match(dry.events.find((x) => x.path === 'data.txt'), { action: 'whole', message: /measured by sketch/ }, 'dry run: the sketch says whole')
  const r = await push(home, server.url, clientOpts())
  const e = r.events.find((x) => x.path === 'data.txt')
  t.match(e, { action: 'whole', message: 'measured by matching', copiedBytes: 0 })
  t.ok(e!.similarity! < 0.5, `measured ${e!.similarity}`)
  t.equal(await readFile(join(work, 'data.txt'), 'utf8'), rewritten, 'rebuilt exactly')
})

t.test('sketchWant and sketch messages round-trip; chunks carry sketchable', async (t) => {
  t.same(decode(encode({ t: 'sketchWant', id: 7 })), { t: 'sketchWant', id: 7 })
  t.same(decode(encode({ t: 'refine', id: 7, signature: null, whole: true })), { t: 'refine', id: 7, signature: null, whole: true })
  t.same(decode(encode({ t: 'refine', id: 7, signature: null, whole: false })), { t: 'refine', id: 7, signature: null }, 'whole: false is left out')
  t.same(decode(encode({ t: 'sketch', id: 7, sketch: null })), { t: 'sketch', id: 7, sketch: null })
  const bytes = decode(encode({ t: 'sketch', id: 7, sketch: Uint8Array.of(1, 2, 3) }))
  t.same(bytes.t === 'sketch' && [...(bytes.sketch ?? [])], [1, 2, 3])
  const c = decode(encode({ t: 'chunks', id: 1, size: 10, chunks: [], digest: 'ab'.repeat(32) as never, sketchable: true }))
  t.equal(c.t === 'chunks' && c.sketchable, true)
})

t.test('a hostile sender: a malformed sketch, or one nobody asked for, ends the session (BAD_MESSAGE), the file untouched', async (t) => {
  const { memoryChannelPair } = await import('../../src/net/index.js')
  const { runReceiver, SyncReport, sessionOptions, SYNC_CHUNK_PARAMS } = await import('../../src/sync/index.js')
  const { Store } = await import('../../src/store/index.js')
  const { chunkBytes, cutterFor } = await import('../../src/chunk/index.js')
  const { digestBytes } = await import('../../src/hash/index.js')
  const lines = sourceLines()
  const old = lines.join('\n')
  for (let i = 100; i < 2500; i += 200) lines[i] += ' // edited'
  const edited = Buffer.from(lines.join('\n'))
  const chunks = chunkBytes(edited, cutterFor(SYNC_CHUNK_PARAMS))
  for (const [name, reply] of [
    ['malformed', (id: number) => ({ t: 'sketch' as const, id, sketch: Uint8Array.of(9, 9, 9, 9) })],
    ['unasked', () => ({ t: 'sketch' as const, id: 999, sketch: null })],
  ] as const) {
    const root = await tempTree(t, { 'src.ts': old })
    const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
    t.teardown(() => store.close())
    const [mine, theirs] = memoryChannelPair()
    const receiving = runReceiver(mine, {
      root, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal, now: () => new Date(),
    })
    receiving.catch(() => undefined) // checked below; it may fail while the fake peer still talks
    await theirs.send({ t: 'files', entries: [{ path: 'src.ts', kind: 'file', size: edited.length, mtimeMs: Date.now() + 60_000, mode: 0o644 }] })
    await theirs.send({ t: 'filesEnd' })
    for await (const m of theirs.messages()) {
      if (m.t === 'want') await theirs.send({ t: 'chunks', id: m.id, size: edited.length, chunks, digest: digestBytes(edited), sketchable: true })
      if (m.t === 'sketchWant') {
        await theirs.send(reply(m.id))
        break
      }
    }
    await t.rejects(receiving, { code: 'BAD_MESSAGE' }, `${name}: the receiver ends the session`)
    t.equal(await readFile(join(root, 'src.ts'), 'utf8'), old, `${name}: the file is as it was`)
  }
})
