import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { chunkBytes, cutterFor } from '../../src/chunk/index.js'
import { EMPTY_SIGNATURE, encodeSignature } from '../../src/delta/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { memoryChannelPair } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { push, runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, startServer } from '../support/sync.js'

t.test('a refined exchange: a small insert and overwrite in a 4 MiB file cost about their own size', async (t) => {
  const big = Buffer.from(randomBytes(41, 4 * 1024 * 1024))
  const home = await tempTree(t, { 'disk.img': big })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  await push(home, server.url, clientOpts())
  const edited = Buffer.concat([big.subarray(0, 1_000_000), Buffer.from('a hundred bytes inserted here '.repeat(3).slice(0, 100)), big.subarray(1_000_000)])
  edited.set(randomBytes(42, 64), 3_000_000)
  await writeFile(join(home, 'disk.img'), edited)
  const r = await push(home, server.url, clientOpts())
  const e = r.events.find((x) => x.path === 'disk.img')
  t.match(e, { action: 'delta', seed: 'disk.img' })
  // One round costs each edit a block of literal (2 KiB blocks for 4 MiB: > 4 KiB in all).
  t.ok(e!.literalBytes! < 1024, `literal bytes ${e!.literalBytes} for 164 bytes of edits`)
  t.ok(r.summary.wireBytesSent + r.summary.wireBytesReceived < 12_000, `${r.summary.wireBytesSent + r.summary.wireBytesReceived} bytes on the wire`)
  t.ok((await readFile(join(work, 'disk.img'))).equals(edited), 'rebuilt exactly')
})

t.test('hostile refinement messages end the session (BAD_MESSAGE); files untouched', async (t) => {
  const big = Buffer.from(randomBytes(43, 256 * 1024))
  const edited = Buffer.concat([big.subarray(0, 100_000), Buffer.from('inserted'), big.subarray(100_000)])
  const chunks = chunkBytes(edited, cutterFor(SYNC_CHUNK_PARAMS))
  const deps = async (root: string) => {
    const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
    t.teardown(() => store.close())
    return { root, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal }
  }

  for (const [name, reply] of [
    ['a malformed match list', (id: number) => ({ t: 'matches' as const, id, list: Uint8Array.of(1, 2, 3) })],
    ['matches nobody waits for', () => ({ t: 'matches' as const, id: 777, list: Uint8Array.of(1) })],
  ] as const) {
    const root = await tempTree(t, { 'f.bin': big })
    const [mine, theirs] = memoryChannelPair()
    const receiving = runReceiver(mine, { ...(await deps(root)), now: () => new Date() })
    receiving.catch(() => undefined) // checked below; it may fail while the fake peer still talks
    await theirs.send({ t: 'files', entries: [{ path: 'f.bin', kind: 'file', size: edited.length, mtimeMs: Date.now() + 60_000, mode: 0o644 }] })
    await theirs.send({ t: 'filesEnd' })
    for await (const m of theirs.messages()) {
      if (m.t === 'want') await theirs.send({ t: 'chunks', id: m.id, size: edited.length, chunks, digest: digestBytes(edited), refinable: true })
      if (m.t === 'plan') {
        t.equal(m.refine, true, `${name}: the receiver asked for a refined exchange`)
        await theirs.send(reply(m.id))
        break
      }
    }
    await t.rejects(receiving, { code: 'BAD_MESSAGE' }, `${name}: the receiver ends the session`)
    t.ok((await readFile(join(root, 'f.bin'))).equals(big), `${name}: the file is as it was`)
  }

  // The other way: a receiver that sends a refinement signature the sender cannot read.
  const root = await tempTree(t, { 'f.bin': edited })
  const [mine, theirs] = memoryChannelPair()
  const sending = runSender(mine, await deps(root))
  sending.catch(() => undefined) // checked below
  for await (const m of theirs.messages()) {
    if (m.t === 'summary') await theirs.send({ t: 'summaryWant', paths: m.dirs.map((d) => d.path) }) // list it all
    if (m.t === 'filesEnd') await theirs.send({ t: 'want', id: 1, path: 'f.bin' })
    if (m.t === 'chunks' && m.more !== true) await theirs.send({ t: 'plan', id: 1, method: 'delta', seed: 'f.bin', similarity: 1, signature: encodeSignature(EMPTY_SIGNATURE), refine: true })
    if (m.t === 'matches') {
      await theirs.send({ t: 'refine', id: 1, signature: Uint8Array.of(0x64, 0x73, 0x52, 1, 0) })
      break
    }
  }
  await t.rejects(sending, { code: 'BAD_MESSAGE' }, 'a bad refinement signature ends the sender\'s session')
  t.ok((await readFile(join(root, 'f.bin'))).equals(edited), 'and its file is untouched')
})
