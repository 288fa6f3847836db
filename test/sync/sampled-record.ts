import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Store } from '../../src/store/index.js'
import { sampleChunks } from '../../src/store/sampling.js'
import { pull, push, SYNC_CHUNK_PARAMS } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

/** `bytes` with 100 random bytes written at each of `at`. */
function overwritten(bytes: Uint8Array, at: readonly number[], seed: number): Buffer {
  const out = Buffer.from(bytes)
  at.forEach((o, i) => out.set(randomBytes(seed + i, 100), o))
  return out
}

t.test('a large file received keeps the sample it came with as its record, and seeds the next delta both ways', async (t) => {
  const v1 = randomBytes(1, 6 * 1024 * 1024) // ~700 chunks: its list goes as a sample
  const home = await tempTree(t, { 'big.bin': v1 })
  // The server has another file at that path: a new path would be probed (PROTOCOL.md §4.6)
  // and, with no seed here, sent whole without a list.
  const work = await tempTree(t, { 'big.bin': randomBytes(99, 1000) })
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  // A second machine with the same v1, synced once (nothing moves: the same content).
  const other = await tempTree(t, { 'big.bin': v1 })
  await pull(server.url, other, clientOpts())

  // The server's record is the sample the sender listed, not a chunking of the file it wrote.
  let store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  const rec = store.get('big.bin')
  await store.close()
  t.equal(rec?.sampled, true, 'recorded as a sample')
  t.ok(rec!.chunks.length > 20 && rec!.chunks.length < 300, `${rec?.chunks.length} sampled chunks of ~700`)
  t.same(sampleChunks(rec!.chunks), rec!.chunks, 'exactly a sample')
  t.equal(rec?.size, v1.length)

  // Edited on the sender: the server measures it against its sampled record and takes a delta.
  const v2 = overwritten(v1, [100_000, 3_000_000, 5_500_000], 10)
  await writeFile(join(home, 'big.bin'), v2)
  const r2 = await push(home, server.url, clientOpts())
  t.match(r2.events.find((e) => e.path === 'big.bin'), { action: 'delta', seed: 'big.bin' })
  t.ok(r2.summary.wireBytesSent + r2.summary.wireBytesReceived < 200_000, `${r2.summary.wireBytesSent + r2.summary.wireBytesReceived} bytes for three 100-byte edits in 6 MiB`)
  t.ok((await readFile(join(work, 'big.bin'))).equals(v2), 'rebuilt exactly')

  // Pulled by the machine holding v1: the server sends its sampled record's list as a sample.
  const r3 = await pull(server.url, other, clientOpts())
  t.match(r3.events.find((e) => e.path === 'big.bin'), { action: 'delta', seed: 'big.bin' })
  t.ok(r3.summary.wireBytesSent + r3.summary.wireBytesReceived < 200_000, `${r3.summary.wireBytesSent + r3.summary.wireBytesReceived} bytes pulled`)
  t.ok((await readFile(join(other, 'big.bin'))).equals(v2), 'pulled exactly')
  store = await Store.open(work, { params: SYNC_CHUNK_PARAMS })
  t.equal(store.get('big.bin')?.sampled, true, 'still a sample after the delta')
  await store.close()
})
