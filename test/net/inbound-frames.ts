import t from 'tap'
import { memoryChannelPair, type FileEntry, type Message } from '../../src/net/index.js'

// A long path repeated: a `files` frame of ~a few KB that unpacks to ~4 MB of entries.
const path = Array.from({ length: 15 }, () => 'a'.repeat(250)).join('/') + '/x'
const entries: FileEntry[] = Array.from({ length: 1000 }, () => ({ path, kind: 'file', size: 1, mtimeMs: 1, mode: 0o644 }))

t.test('frames wait in the inbound queue as they came, decoded only as they are taken', async (t) => {
  const [a, b] = memoryChannelPair()
  const n = 30
  const heapBefore = process.memoryUsage().heapUsed
  for (let i = 0; i < n; i++) await a.send({ t: 'files', entries })
  await a.send({ t: 'filesEnd' })
  await new Promise((r) => setTimeout(r, 50))
  const queued = (b as unknown as { queuedBytes: number }).queuedBytes
  const grew = process.memoryUsage().heapUsed - heapBefore
  t.ok(queued < n * 100_000, `${n} lists of ${entries.length} × ${path.length}-byte paths wait as ${queued} bytes`)
  // Decoded on arrival they held ~3.8 MB of path strings each: 94 MiB here (a server died of a flood of them).
  t.ok(grew < 40 * 2 ** 20, `the heap grew ${(grew / 2 ** 20).toFixed(1)} MiB while they waited (decoded: ~${(n * 3.8).toFixed(0)} MB)`)
  let lists = 0
  for await (const m of b.messages()) {
    if (m.t === 'files') {
      lists++
      t.equal(m.entries.length, 1000)
    }
    if (m.t === 'filesEnd') break
  }
  t.equal(lists, n, 'every list arrives, in order')
})

t.test('a frame that does not decode ends the session when it is reached: the ones before it arrive, none after', async (t) => {
  const [a, b] = memoryChannelPair()
  await a.send({ t: 'filesEnd' })
  // What a peer that skips the codec might send: write a raw frame below it.
  await (a as unknown as { writeFrame(f: Uint8Array): Promise<void> }).writeFrame(Uint8Array.of(0xc1))
  await a.send({ t: 'dataEnd', id: 3 })
  const got: Message[] = []
  await t.rejects((async () => {
    for await (const m of b.messages()) got.push(m)
  })(), { code: 'BAD_MESSAGE' })
  t.same(got, [{ t: 'filesEnd' }], 'the message before it, and nothing after it')
})
