import t, { type Test } from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { chunkBytes, cutterFor } from '../../src/chunk/index.js'
import {
  applyDelta, blockSizeForRefinement, computeRefineSignature, computeSignature, decodeMatches, decodeRefineSignature, decodeSignature, EMPTY_SIGNATURE, encodeMatchedDelta,
  encodeMatches, encodeRefineSignature, encodeSignature, matchTarget, nextRefinement, refineMatches, type MatchList, type TargetCheck,
} from '../../src/delta/index.js'
import { memorySeedReader, memorySeedSource } from '../../src/fs/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { DIRECT_CHECK_PROTOCOL_VERSION, ENDS_PROTOCOL_VERSION, memoryChannelPair, SUPPORTED_VERSIONS, type Channel, type Message } from '../../src/net/index.js'
import { Store } from '../../src/store/index.js'
import { push, runReceiver, runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'
import { clientOpts, startServer } from '../support/sync.js'

/** The dependencies of a role run on a memory channel (runSender / runReceiver). */
async function roleDeps(t: Test, root: string, version?: number) {
  const store = await Store.open(root, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  return { root, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report: new SyncReport(), signal: new AbortController().signal, ...(version !== undefined && { version }) }
}

/** Whether nothing more comes on `channel` for 50 ms. */
async function quiet(channel: Channel): Promise<boolean> {
  const before = channel.stats.bytesReceived
  await new Promise((r) => setTimeout(r, 50))
  return channel.stats.bytesReceived === before
}

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

  for (const [name, reply] of [
    ['a malformed match list', (id: number) => ({ t: 'matches' as const, id, list: Uint8Array.of(1, 2, 3) })],
    ['matches nobody waits for', () => ({ t: 'matches' as const, id: 777, list: Uint8Array.of(1) })],
  ] as const) {
    const root = await tempTree(t, { 'f.bin': big })
    const [mine, theirs] = memoryChannelPair()
    const receiving = runReceiver(mine, { ...(await roleDeps(t, root)), now: () => new Date() })
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
  const sending = runSender(mine, await roleDeps(t, root))
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

t.test('plan.ends (version 9): the sender ends the rounds by the receiver\'s rule and sends its delta after its last list', async (t) => {
  const old = Buffer.from(randomBytes(45, 512 * 1024))
  const edited = Buffer.concat([old.subarray(0, 200_000), Buffer.from('forty bytes inserted in the middle here'), old.subarray(200_000)])
  edited.set(randomBytes(46, 32), 400_000)
  for (const ends of [true, false]) {
    const root = await tempTree(t, { 'f.bin': edited })
    const [mine, theirs] = memoryChannelPair()
    const sending = runSender(mine, await roleDeps(t, root))
    const sig = await computeSignature(memorySeedSource(old), { size: old.length, blockSize: blockSizeForRefinement(old.length, 2) })
    let block = sig.blockSize
    let round = 0
    let waited = false
    const delta: Uint8Array[] = []
    for await (const m of theirs.messages()) {
      if (m.t === 'summary') await theirs.send({ t: 'summaryWant', paths: m.dirs.map((d) => d.path) })
      if (m.t === 'filesEnd') await theirs.send({ t: 'want', id: 1, path: 'f.bin' })
      if (m.t === 'chunks' && m.more !== true) {
        await theirs.send({ t: 'plan', id: 1, method: 'delta', seed: 'f.bin', similarity: 0.9, signature: encodeSignature(sig), refine: true, ...(ends && { ends }) })
      }
      if (m.t === 'matches') {
        const list = decodeMatches(m.list)
        const next = nextRefinement(list, block, round, false)
        if (next !== null) {
          await theirs.send({ t: 'refine', id: 1, signature: encodeRefineSignature(await computeRefineSignature(memorySeedReader(old), list, next)) })
          block = next.blockSize
          round++
        } else if (!ends) {
          // Without `ends` the sender waits to be told, whatever its own rule says.
          waited = await quiet(theirs)
          await theirs.send({ t: 'refine', id: 1, signature: null })
        }
      }
      if (m.t === 'data') delta.push(m.bytes)
      if (m.t === 'dataEnd') {
        await theirs.send({ t: 'result', id: 1, path: 'f.bin', action: 'delta', ok: true })
        await theirs.send({ t: 'done', summary: {} })
        break
      }
    }
    await sending
    t.ok(round >= 1, `${ends}: the exchange was refined (${round} rounds after the first)`)
    if (!ends) t.ok(waited, 'without ends: nothing came after the last list until refine nil')
    const out: Uint8Array[] = []
    await applyDelta(memorySeedReader(old), (async function* () { yield* delta })(), { write: async (b) => void out.push(b.slice()) })
    t.ok(Buffer.concat(out).equals(edited), `${ends}: the delta rebuilds the file`)
  }
})

t.test('the receiver asks a sender of version 9 to end the rounds, and says nothing after the last list; an older one is told (refine nil)', async (t) => {
  const old = Buffer.from(randomBytes(47, 512 * 1024))
  const edited = Buffer.concat([old.subarray(0, 300_000), Buffer.from('inserted'), old.subarray(300_000)])
  const chunks = chunkBytes(edited, cutterFor(SYNC_CHUNK_PARAMS))
  for (const version of [SUPPORTED_VERSIONS[0]!, DIRECT_CHECK_PROTOCOL_VERSION]) {
    const root = await tempTree(t, { 'f.bin': old })
    const [mine, theirs] = memoryChannelPair()
    const receiving = runReceiver(mine, { ...(await roleDeps(t, root, version)), now: () => new Date() })
    await theirs.send({ t: 'files', entries: [{ path: 'f.bin', kind: 'file', size: edited.length, mtimeMs: Date.now() + 60_000, mode: 0o644 }] })
    await theirs.send({ t: 'filesEnd' })
    // The sender's side by hand: round 1 against the plan's signature, then each refinement.
    let plan: Extract<Message, { t: 'plan' }> | undefined
    let list: MatchList | undefined
    let digest: TargetCheck | undefined
    let block = 0
    let round = 0
    let nils = 0
    let silent = false
    const sendDelta = async (id: number) => {
      for await (const bytes of encodeMatchedDelta(list!, memorySeedReader(edited), digest!).bytes) await theirs.send({ t: 'data', id, bytes })
      await theirs.send({ t: 'dataEnd', id })
    }
    const sendList = async (id: number) => {
      await theirs.send({ t: 'matches', id, list: encodeMatches(list!) })
      if (plan?.ends === true && nextRefinement(list!, block, round, false) === null) {
        silent = await quiet(theirs)
        await sendDelta(id)
      }
    }
    for await (const m of theirs.messages()) {
      if (m.t === 'want') await theirs.send({ t: 'chunks', id: m.id, size: edited.length, chunks, digest: digestBytes(edited), refinable: true })
      if (m.t === 'plan') {
        plan = m
        const sig = decodeSignature(m.signature!)
        block = sig.blockSize
        ;({ list, digest } = await matchTarget(sig, memorySeedSource(edited)))
        await sendList(m.id)
      }
      if (m.t === 'refine' && m.signature !== null) {
        const sig = decodeRefineSignature(m.signature, list!)
        list = await refineMatches(list!, sig, memorySeedReader(edited))
        block = sig.blockSize
        round++
        await sendList(m.id)
      }
      if (m.t === 'refine' && m.signature === null) {
        nils++
        await sendDelta(m.id)
      }
      if (m.t === 'done') break
    }
    theirs.close()
    await receiving
    const v9 = version >= ENDS_PROTOCOL_VERSION
    t.equal(plan?.ends, v9 ? true : undefined, `version ${version}: plan.ends ${v9 ? 'set' : 'not set'}`)
    t.equal(nils, v9 ? 0 : 1, `version ${version}: refine nil ${v9 ? 'not sent' : 'sent'}`)
    if (v9) t.ok(silent, 'nothing came after the last list')
    t.ok((await readFile(join(root, 'f.bin'))).equals(edited), `version ${version}: the file is rebuilt`)
  }
})
