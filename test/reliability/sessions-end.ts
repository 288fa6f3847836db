// Every session ends (DESIGN "What must always hold"; issue 7 item 1): a peer that vanishes at
// any point of a session — after auth, after the file list, while the receiver computes a large
// seed's signature, mid-data, after dataEnd — must not hold the tree. The next legitimate push
// to the same tree finishes within seconds and leaves the trees equal.
import t, { type Test } from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { push } from '../../src/sync/index.js'
import { cutPull, cutPush, pushedTemplate, serverOnCopy, tempLeftovers, treeState, within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { clientOpts } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

/** The next push must finish within this; a frozen tree waits forever (5 min idle timeout). */
const NEXT_PUSH_MS = 5000
/** The hostile session itself, up to its cut: stuck only if the server never answers. */
const HOSTILE_MS = 15_000
const BIG = 20 * 1024 * 1024

function smallFiles(seed: number): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {}
  for (let i = 0; i < 8; i++) out[`s${i}.txt`] = randomBytes(seed + i, 4096 + i * 100)
  out['sub/x.txt'] = randomBytes(seed + 99, 3000)
  return out
}

/** A legitimate push with a small change, bounded in time; then the trees must be equal. */
async function legitPush(t: Test, home: string, work: string, url: string, round: number, what: string): Promise<void> {
  await writeFile(join(home, 's1.txt'), randomBytes(1000 + round, 5000))
  const { ms } = await within(NEXT_PUSH_MS, `push after ${what}`, push(home, url, clientOpts()))
  t.ok(ms < NEXT_PUSH_MS, `next push after ${what} done in ${ms} ms`)
  t.same(await treeState(work), await treeState(home), `trees equal after ${what}`)
  t.same(await tempLeftovers(work), [], `no temp files on the server after ${what} and one good push`)
}

/** For each cut, a fresh server on `template` and a pusher of `hostile` that vanishes there;
 *  then a legitimate push of `home` must finish and leave the trees equal. */
async function pushersVanishing(t: Test, home: string, hostile: string, template: string, cuts: readonly { what: string; when: Parameters<typeof cutPush>[2] }[], firstRound: number): Promise<void> {
  let round = firstRound
  for (const { what, when } of cuts) {
    await t.test(`vanish after ${what}`, async (t) => {
      const { url, work } = await serverOnCopy(t, template)
      await within(HOSTILE_MS, `hostile push up to ${what}`, cutPush(hostile, url, when))
      await legitPush(t, home, work, url, ++round, `a pusher vanished after ${what}`)
    })
  }
}

t.test('a pusher that vanishes after each message type does not hold the tree', async (t) => {
  const bigOld = randomBytes(7, BIG)
  const home = await tempTree(t, { 'big.bin': bigOld, ...smallFiles(100) })
  const template = await pushedTemplate(t, home)

  // The hostile side's tree: big.bin edited near the start, so the server picks its own
  // big.bin as the seed and computes a 20 MiB signature when the chunk list arrives.
  const bigNew = Buffer.from(bigOld)
  bigNew.set(randomBytes(8, 65536), 4096)
  const hostile = await tempTree(t, { 'big.bin': bigNew, ...smallFiles(100) })

  const cuts: { what: string; when: Parameters<typeof cutPush>[2] }[] = [
    { what: 'auth', when: {} },
    { what: 'a files batch', when: { sent: 'files' } },
    { what: 'filesEnd', when: { sent: 'filesEnd' } },
    { what: "big.bin's chunk list (server computing a 20 MiB seed's signature)", when: { sent: 'chunks' } },
    { what: 'the plan arrived', when: { received: 'plan' } },
    { what: 'the first data frame', when: { sent: 'data' } },
    { what: 'the fifth data frame', when: { sent: 'data', nth: 5 } },
    { what: 'dataEnd', when: { sent: 'dataEnd' } },
  ]
  await pushersVanishing(t, home, hostile, template, cuts, 0)
})

t.test('a puller that vanishes mid-pull does not hold the tree', async (t) => {
  const bigOld = randomBytes(17, 4 * 1024 * 1024)
  const home = await tempTree(t, { 'big.bin': bigOld, ...smallFiles(200) })
  const template = await pushedTemplate(t, home)
  // The puller has an older big.bin: it computes the seed's signature and gets a delta.
  const bigLocal = Buffer.from(bigOld)
  bigLocal.set(randomBytes(18, 65536), 8192)

  const cuts: { what: string; when: Parameters<typeof cutPull>[2] }[] = [
    { what: 'auth', when: {} },
    { what: 'the file list', when: { received: 'files' } },
    { what: 'its first want', when: { sent: 'want' } },
    { what: 'its plan', when: { sent: 'plan' } },
    { what: 'the first data frame', when: { received: 'data' } },
  ]
  let round = 100
  for (const { what, when } of cuts) {
    await t.test(`vanish after ${what}`, async (t) => {
      const { url, work } = await serverOnCopy(t, template)
      const local = await tempTree(t, { 'big.bin': bigLocal })
      await within(HOSTILE_MS, `hostile pull up to ${what}`, cutPull(url, local, when))
      await legitPush(t, home, work, url, ++round, `a puller vanished after ${what}`)
      t.same(await tempLeftovers(local), [], `no temp files in the pulling tree after ${what}`)
    })
  }
})

t.test('a pusher that vanishes during a direct exchange (a large file changed in place, §4.12) does not hold the tree', async (t) => {
  const HUGE = 66 * 1024 * 1024
  const hugeOld = randomBytes(9, HUGE)
  const home = await tempTree(t, { 'huge.bin': hugeOld, ...smallFiles(200) })
  const template = await pushedTemplate(t, home)
  const hugeNew = Buffer.from(hugeOld)
  hugeNew.set(randomBytes(10, 4096), 40 * 1024 * 1024)
  const hostile = await tempTree(t, { 'huge.bin': hugeNew, ...smallFiles(200) })
  const cuts: { what: string; when: Parameters<typeof cutPush>[2] }[] = [
    { what: 'its direct want (server computing the signature)', when: { received: 'want' } },
    { what: 'the plan arrived', when: { received: 'plan' } },
    { what: 'the first match list', when: { sent: 'matches' } },
    { what: 'the delta began', when: { sent: 'data' } },
  ]
  await pushersVanishing(t, home, hostile, template, cuts, 200)
})
