/** SHA-256 on a worker thread (WorkerDigester): the same digests as in-thread hashing, whatever the
 *  pieces; hashes under way at once kept apart; a dropped one forgotten; buffers reusable at once. */
import t from 'tap'
import fc from 'fast-check'
import { digestBytes, FileDigester, WorkerDigester } from '../../src/hash/index.js'
import { randomBytes } from '../support/random.js'

t.test('the digest of any split of any bytes is their SHA-256', async () => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 200_000 }), fc.array(fc.integer({ min: 1, max: 70_000 }), { maxLength: 8 }), async (bytes, cuts) => {
      const w = new WorkerDigester()
      let at = 0
      for (const c of cuts) {
        if (at >= bytes.length) break
        await w.update(bytes.subarray(at, at + c))
        at += c
      }
      if (at < bytes.length) await w.update(bytes.subarray(at))
      return (await w.digest()) === digestBytes(bytes)
    }),
    { numRuns: 60 },
  )
})

t.test('a piece may be overwritten as soon as update returns; several hashes at once stay apart; a dropped one is forgotten', async (t) => {
  const a = randomBytes(1, 3 * 1024 * 1024)
  const b = randomBytes(2, 2 * 1024 * 1024)
  const wa = new WorkerDigester()
  const wb = new WorkerDigester()
  const dropped = new WorkerDigester()
  const piece = new Uint8Array(1024 * 1024)
  const inThread = new FileDigester()
  for (let i = 0; i < 3; i++) {
    piece.set(a.subarray(i * piece.length, (i + 1) * piece.length))
    inThread.update(piece)
    await wa.update(piece)
    piece.fill(0xee) // reused by the caller at once: the worker has its own copy
    await dropped.update(piece)
    if (i < 2) await wb.update(b.subarray(i * piece.length, (i + 1) * piece.length))
  }
  dropped.drop()
  t.equal(await wb.digest(), digestBytes(b), 'b')
  t.equal(await wa.digest(), inThread.digest(), 'a, its pieces reused after each update')
  t.match(await wa.digest().catch((err: Error) => err.message), /its digest was taken/, 'a digest is given once')
})

t.test('more than the in-flight bound: update waits, and the digest is still right', async (t) => {
  const big = randomBytes(3, 40 * 1024 * 1024)
  const w = new WorkerDigester()
  // Not awaited one by one: the pieces pile up past 8 MiB, and the later updates wait.
  const updates: Promise<void>[] = []
  for (let at = 0; at < big.length; at += 1024 * 1024) updates.push(w.update(big.subarray(at, at + 1024 * 1024)))
  let lastDone = false
  void updates.at(-1)!.then(() => (lastDone = true))
  await Promise.resolve()
  t.notOk(lastDone, 'the last piece waits for room')
  await Promise.all(updates)
  t.equal(await w.digest(), digestBytes(big))
})
