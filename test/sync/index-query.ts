import t, { type Test } from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connect, LIMITS, type Channel } from '../../src/net/index.js'
import { sketchBytes } from '../../src/similarity/index.js'
import { chunkParams } from '../../src/chunk/index.js'
import { Store } from '../../src/store/index.js'
import { askGroups, askSimilar, groupMessages, GroupAssembler } from '../../src/sync/index.js'
import type { SimilarGroup } from '../../src/types.js'
import { vanish } from '../support/hostile.js'
import { OPTIONS, testServer } from '../support/net.js'
import { randomBytes } from '../support/random.js'
import { startServer, TOKEN } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

// The `query` role (PROTOCOL.md §4.10): `dsync similar FILE URL` and `dsync groups URL` ask a
// real server's similarity index over real WebSocket.

/** A with 100 bytes replaced in every 1000: 90% kept, no whole 8 KiB chunk left. */
function scattered(a: Uint8Array, seed: number): Uint8Array {
  const parts: Uint8Array[] = []
  for (let p = 0; p < a.length; p += 1000) parts.push(a.subarray(p, p + 900), randomBytes(seed + p, 100))
  return Buffer.concat(parts)
}

const ASK = { token: TOKEN, signal: new AbortController().signal, metric: 'dice', threshold: 0.25 } as const

async function servedTree(t: Test) {
  const a = randomBytes(1, 120_000)
  const files: Record<string, Uint8Array> = {
    'docs/a.bin': a,
    'docs/edited.bin': scattered(a, 7),
    'docs/half.bin': Buffer.concat([a.subarray(0, 60_000), randomBytes(3, 60_000)]),
    'other/b.bin': randomBytes(5, 80_000),
    'other/b-copy.bin': Buffer.concat([randomBytes(5, 80_000), randomBytes(6, 2_000)]),
  }
  for (let i = 0; i < 10; i++) files[`noise/${i}.bin`] = randomBytes(100 + i, 30_000)
  const root = await tempTree(t, files)
  const log: string[] = []
  const server = await startServer(t, root, { log })
  return { a, root, server, log }
}

t.test('similar on a served tree: the files most similar to a local file, best first, from the server index', async (t) => {
  const { a, root, server, log } = await servedTree(t)
  const query = sketchBytes(scattered(a, 99))
  const r = await askSimilar(server.url, query, { ...ASK, top: 10 })
  t.same(r.files.map((f) => f.path), ['docs/a.bin', 'docs/edited.bin', 'docs/half.bin'])
  t.ok(Math.abs(r.files[0]!.dice - 0.9) < 0.05, `a: dice ${r.files[0]!.dice}`)
  t.equal(r.scan?.files, 15)
  t.equal(r.scan?.filesRead, 15, 'the first query sketches the tree')
  t.match(log.join('\n'), /query \/: 15 files indexed, 15 read/)

  // A subdir of the served tree; the quick check reads only what changed; --top cuts.
  await writeFile(join(root, 'docs/half.bin'), randomBytes(4, 50_000))
  const sub = await askSimilar(`${server.url}/docs`, query, { ...ASK, top: 1 })
  t.same(sub.files.map((f) => f.path), ['a.bin'], 'paths are the subdir\'s')
  const again = await askSimilar(server.url, query, { ...ASK, top: 10 })
  t.equal(again.scan?.filesRead, 1, 'only the changed file is read again')
  t.same(again.files.map((f) => f.path), ['docs/a.bin', 'docs/edited.bin'])
  const asIs = await askSimilar(server.url, query, { ...ASK, top: 10, scan: false })
  t.equal(asIs.scan, undefined)
  t.same(asIs.files.map((f) => f.path), ['docs/a.bin', 'docs/edited.bin'])
})

t.test('groups on a served tree: every group, as the local command finds them', async (t) => {
  const { server } = await servedTree(t)
  const groups: SimilarGroup[] = []
  let begun = 0
  await askGroups(server.url, { ...ASK, threshold: 0.5 }, { begin: () => void begun++, group: (g) => void groups.push(g) })
  t.equal(begun, 1)
  const sets = groups.map((g) => g.files.map((f) => f.path).sort())
  t.same(sets, [['docs/a.bin', 'docs/edited.bin', 'docs/half.bin'], ['other/b-copy.bin', 'other/b.bin']])
  t.equal(groups[0]!.files[0]!.similarity, 1, 'the reference first')
  t.ok(groups[0]!.pairs.every((p) => p.similarity >= 0.5))
  const none: SimilarGroup[] = []
  await askGroups(server.url, { ...ASK, threshold: 0.99 }, { begin: () => undefined, group: (g) => void none.push(g) })
  t.same(none, [])
})

t.test('query sessions: a wrong token, a missing subdir, an older server: clear errors', async (t) => {
  const { server } = await servedTree(t)
  const query = sketchBytes(randomBytes(9, 10_000))
  await t.rejects(askSimilar(server.url, query, { ...ASK, token: 'wrong', top: 3 }), { code: 'AUTH_FAILED' })
  await t.rejects(askSimilar(`${server.url}/nope`, query, { ...ASK, top: 3 }), { code: 'NOT_FOUND', message: /\/nope: no such directory/ })
  const old = await startServer(t, await tempTree(t, { 'x.txt': 'x' }), { versions: [4, 3, 2, 1] })
  await t.rejects(askGroups(old.url, ASK, { begin: () => undefined, group: () => undefined }), {
    code: 'PROTOCOL_VERSION',
    message: /needs version 5: upgrade dsync on the server/,
  })
})

t.test('a hostile query client: a bad sketch, a wrong first message: BAD_MESSAGE, the server goes on', async (t) => {
  const { server, a } = await servedTree(t)
  const ask = async (send: (c: Channel) => Promise<void>): Promise<unknown> => {
    const { channel } = await connect(server.url, { token: TOKEN, role: 'query', options: OPTIONS })
    await send(channel)
    try {
      for await (const m of channel.messages()) void m
      return undefined
    } catch (err) {
      return err
    }
  }
  const garbage = await ask((c) => c.send({ t: 'query', query: { kind: 'similar', sketch: new Uint8Array([1, 2, 3]), metric: 'dice', threshold: 0.5, top: 3, scan: false } }))
  t.match(garbage, { code: 'BAD_MESSAGE', message: /sketch/ })
  const wrong = await ask((c) => c.send({ t: 'filesEnd' }))
  t.match(wrong, { code: 'BAD_MESSAGE', message: /expected 'query'/ })
  const r = await askSimilar(server.url, sketchBytes(a), { ...ASK, top: 1 })
  t.same(r.files.map((f) => f.path), ['docs/a.bin'], 'still serving')
})

/** A server that answers any query with `answer`'s messages. */
async function liar(t: Test, answer: (c: Channel) => Promise<void>) {
  return testServer(t, async (channel) => {
    for await (const m of channel.messages()) {
      if (m.t === 'query') await answer(channel)
    }
  })
}

t.test('a hostile server: pieces that do not fit together, too many files: BAD_MESSAGE at the client', async (t) => {
  const sink = { begin: () => undefined, group: () => undefined }
  const file = { path: 'a', size: 1, similarity: 1 }
  const orphan = await liar(t, (c) => c.send({ t: 'groupsFound', pieces: [{ cont: true, files: [file], pairs: [] }], more: false }))
  await t.rejects(askGroups(orphan.url, { ...ASK, token: null }, sink), { code: 'BAD_MESSAGE', message: /no group before it/ })
  const badPair = await liar(t, (c) => c.send({ t: 'groupsFound', pieces: [{ cont: false, files: [file], pairs: [{ a: 0, b: 5, similarity: 0.9 }] }], more: false }))
  await t.rejects(askGroups(badPair.url, { ...ASK, token: null }, sink), { code: 'BAD_MESSAGE', message: /names file 5 of a group of 1/ })
  const row = { path: 'x', size: 1, jaccard: 1, dice: 1, lcs: 1, containment: 1, containedIn: 1, errorBound: 0 }
  const many = await liar(t, (c) => c.send({ t: 'similarFound', files: [row, { ...row, path: 'y' }, { ...row, path: 'z' }] }))
  await t.rejects(askSimilar(many.url, sketchBytes(randomBytes(1, 5000)), { ...ASK, token: null, top: 2 }), { code: 'BAD_MESSAGE', message: /sent 3 files; 2 were asked/ })
  const other = await liar(t, (c) => c.send({ t: 'filesEnd' }))
  await t.rejects(askSimilar(other.url, sketchBytes(randomBytes(1, 5000)), { ...ASK, token: null, top: 2 }), { code: 'BAD_MESSAGE', message: /got 'filesEnd'/ })
  const quiet = await liar(t, async () => undefined)
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 300)
  await t.rejects(askSimilar(quiet.url, sketchBytes(randomBytes(1, 5000)), { ...ASK, token: null, top: 2, signal: ac.signal }), { code: 'ABORTED' })
})

t.test('groupMessages and GroupAssembler: any groups cut to frames and put back as they were', async (t) => {
  const group = (g: number, files: number, pairs: number): SimilarGroup => {
    const fs = Array.from({ length: files }, (_, i) => ({ path: `g${g}/${'d/'.repeat(i % 7)}f${i}`, size: i * 10, similarity: i === 0 ? 1 : ((i * 37) % 100) / 100 }))
    const ps = Array.from({ length: pairs }, (_, i) => ({ a: fs[i % files]!.path, b: fs[(i * 7 + 1) % files]!.path, similarity: ((i * 13) % 50) / 100 + 0.5 }))
    return { reference: fs[0]!.path, files: fs, pairs: ps }
  }
  const cases: SimilarGroup[][] = [
    [],
    [group(0, 2, 1)],
    Array.from({ length: 3000 }, (_, g) => group(g, 2 + (g % 3), 1 + (g % 4))), // more groups than a message holds
    [group(0, 9000, 12000), group(1, 3, 2)], // one group over three messages
  ]
  for (const groups of cases) {
    const messages = groupMessages(groups)
    const back: SimilarGroup[] = []
    const asm = new GroupAssembler((g) => back.push(g))
    for (const m of messages) {
      t.ok(m.length <= LIMITS.maxFilesPerMessage, 'pieces per message within the list limit')
      t.ok(m.reduce((n, p) => n + p.files.length + p.pairs.length, 0) <= 4096, 'rows per message bounded')
      asm.add(m)
    }
    asm.flush()
    t.same(back, groups, `${groups.length} groups through ${messages.length} messages`)
  }
})

t.test('a client that vanishes while the server scans stops the scan and frees the tree at once', async (t) => {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < 1000; i++) files[`d${i % 20}/f${i}.bin`] = randomBytes(7000 + i, 64 * 1024)
  const root = await tempTree(t, files)
  const log: string[] = []
  const server = await startServer(t, root, { log })
  const { channel } = await connect(server.url, { token: TOKEN, role: 'query', options: OPTIONS })
  await channel.send({ t: 'query', query: { kind: 'groups', metric: 'dice', threshold: 0.5, scan: true } })
  await new Promise((resolve) => setTimeout(resolve, 50))
  vanish(channel)
  while (!log.some((l) => /query \/: NETWORK/.test(l))) await new Promise((resolve) => setTimeout(resolve, 10))
  // The scan stopped with its client: the index holds only the batches it had committed (it
  // went on to all 1,000 files, and held the tree meanwhile, before).
  const store = await Store.open(root, { params: chunkParams() })
  const indexed = store.sketchIndex().paths().length
  await store.close()
  t.ok(indexed < 1000, `${indexed} of 1000 files indexed when the session ended`)
  const r = await askSimilar(server.url, sketchBytes(files['d0/f0.bin']!), { ...ASK, top: 1 })
  t.equal(r.scan!.filesRead, 1000 - indexed, 'the next query reads the rest')
  t.same(r.files.map((f) => f.path), ['d0/f0.bin'])
})

t.test('a hostile server sending a group of more path bytes than the limit: BAD_MESSAGE, not the heap', async (t) => {
  const long = 'p/'.repeat(1500) // 3,000 bytes a path
  const files = Array.from({ length: 1000 }, (_, i) => ({ path: `${long}${i}`, size: 1, similarity: 1 }))
  const server = await liar(t, async (c) => {
    // 3 MB of paths a message, all one group: the 23rd goes over 64 MiB.
    for (let n = 0; n < 30; n++) await c.send({ t: 'groupsFound', pieces: [{ cont: n > 0, files, pairs: [] }], more: true })
  })
  await t.rejects(askGroups(server.url, { ...ASK, token: null }, { begin: () => undefined, group: () => undefined }), { code: 'BAD_MESSAGE', message: /more than 64 MiB of paths/ })
})
