// kill -9 of a real `dsync push` process at several points of a run (issue 7 items 1 and 5):
// before it connects, right after the session starts, while it scans and while the server
// computes a 20 MiB seed's signature, mid-data, after the first file settled. After each kill
// every file on the server is its old or its new version (never torn); the next push finishes
// within seconds; after it no `.dsync-tmp-*` file is left anywhere in the tree.
import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { digestBytes } from '../../src/hash/index.js'
import { push } from '../../src/sync/index.js'
import { pushedTemplate, serverOnCopy, spawnDsync, tempLeftovers, treeState, within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { clientOpts } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const BIG = 20 * 1024 * 1024
/** A frozen tree waits forever; 15 s leaves room for a 20 MiB delta on a loaded 2-core machine. */
const NEXT_PUSH_MS = 15_000
/** Node starts in ~0.3 s idle, but took over 10 s under a load average of 20 here. */
const START_MS = 30_000

// Six real node processes and a 20 MiB tree per case: more than tap's default 120 s when the
// machine is busy.
t.setTimeout(300_000)

function versions(): [Record<string, Uint8Array>, Record<string, Uint8Array>] {
  const a: Record<string, Uint8Array> = { 'big.bin': randomBytes(21, BIG) }
  const bigB = Buffer.from(a['big.bin']!)
  bigB.set(randomBytes(22, 65536), 1024 * 1024)
  const b: Record<string, Uint8Array> = { 'big.bin': bigB }
  for (let i = 0; i < 12; i++) {
    a[`d${i % 3}/s${i}.txt`] = randomBytes(300 + i, 20_000 + i)
    b[`d${i % 3}/s${i}.txt`] = randomBytes(400 + i, 30_000 + i)
  }
  return [a, b]
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

async function until(what: string, ms: number, cond: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not seen within ${ms} ms`)
    await sleep(10)
  }
}

t.test('kill -9 of a pushing client at several points: no torn file, no stuck tree, no litter', async (t) => {
  const [a, b] = versions()
  const home = await tempTree(t, a)
  // Each kill gets its own server on a copy of the tree as pushed (version a), so one frozen
  // tree fails one case instead of every case after it. The client always pushes version b.
  const template = await pushedTemplate(t, home)
  for (const [p, c] of Object.entries(b)) await writeFile(join(home, p), c)
  const digests = new Map<string, Set<string>>()
  for (const p of Object.keys(a)) digests.set(p, new Set([digestBytes(a[p]!), digestBytes(b[p]!)]))

  let log: string[] = []
  let work = ''
  const started = (n: number) => () => log.filter((l) => l.includes('session started')).length >= n
  const points: { what: string; wait: (n: number) => Promise<void> }[] = [
    { what: 'at once (before it connects)', wait: async () => undefined },
    { what: 'when its session starts', wait: (n) => until('session start', START_MS, started(n)) },
    { what: '300 ms into its session (scanning, or the server signing big.bin)', wait: async (n) => { await until('session start', START_MS, started(n)); await sleep(300) } },
    { what: 'when a temp file appears on the server (mid-data)', wait: () => until('a temp file', START_MS, async () => (await tempLeftovers(work)).length > 0) },
    { what: 'after its first settled file (-v line)', wait: () => until('a -v line', START_MS, () => /\S/.test(cli?.stdout ?? '')) },
  ]
  let cli: ReturnType<typeof spawnDsync> | undefined
  for (const point of points) {
    await t.test(`kill -9 ${point.what}`, async (t) => {
      log = []
      const server = await serverOnCopy(t, template, log)
      work = server.work
      const sessionsBefore = 0
      cli = spawnDsync(['push', home, server.url, '-v'])
      const c = cli
      t.teardown(() => void c.child.kill('SIGKILL'))
      await point.wait(sessionsBefore + 1).catch((err: Error) => t.comment(`${err.message}; killing anyway`))
      c.child.kill('SIGKILL')
      await c.exited
      for (const [p, allowed] of digests) {
        const got = await readFile(join(work, p)).then(digestBytes, () => 'missing')
        t.ok(allowed.has(got), `${p} is its old or its new version after the kill`)
      }
      const { ms } = await within(NEXT_PUSH_MS, 'the push after the kill', push(home, server.url, clientOpts()))
      t.ok(ms < NEXT_PUSH_MS, `the next push finished in ${ms} ms`)
      t.same(await treeState(work), await treeState(home), 'trees equal after the re-run')
      t.same(await tempLeftovers(work), [], 'no .dsync-tmp-* file anywhere after one good re-run')
    })
  }
})
