// SIGTERM, what `systemctl stop`, `docker stop` and a plain `kill` send, ends a real dsync
// process as Ctrl+C does: a server stops its sessions cleanly and exits 0, a client cancels
// (exit 130); neither leaves a temp file, a torn file or its tree's lock behind.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { spawnDsync, tempLeftovers, within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

/** Node starts in ~0.3 s idle, but took over 10 s under a load average of 20 here. */
const START_MS = 30_000
const BIG = 8 * 1024 * 1024

t.setTimeout(180_000)

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Waits until a temp file shows up under `root`: the transfer is under way. */
async function transferring(root: string): Promise<void> {
  while ((await tempLeftovers(root)).length === 0) await sleep(20)
}

t.test('SIGTERM to a server mid-push: it stops its session, exits 0, and the next server and push run at once', async (t) => {
  const big = randomBytes(31, BIG)
  const home = await tempTree(t, { 'big.bin': big, 'small.txt': 'hello' })
  const work = await tempTree(t, { 'other.txt': 'kept' })
  const server = spawnDsync(['serve', '--root', work, '--port', '0'])
  t.teardown(() => void server.child.kill('SIGKILL'))
  const SERVING = /serving .* at (ws:\/\/[^\s;]+)/
  await within(START_MS, 'the server to start', server.waitFor(SERVING))
  const url = SERVING.exec(server.stderr)![1]!
  // 256 KiB/s: the 8 MiB file takes ~30 s, so the signal comes mid-file.
  const client = spawnDsync(['push', home, url, '--bwlimit', '256K'])
  t.teardown(() => void client.child.kill('SIGKILL'))
  await within(START_MS, 'the push to start writing', transferring(work))
  server.child.kill('SIGTERM')
  const { value: code } = await within(10_000, 'the server to exit', server.exited)
  t.equal(code, 0, `the server exits 0 (stderr: ${server.stderr.trim().split('\n').slice(-3).join(' | ')})`)
  t.match(server.stderr, /stopped/, 'and says it stopped')
  t.not(await within(10_000, 'the client to see it', client.exited).then((r) => r.value), 0, 'the push fails: its server went away')
  t.same(await tempLeftovers(work), [], 'no temp file left in the tree')
  // (small.txt, a whole file in one write, may have been settled before the signal)
  t.notOk((await readdir(work)).includes('big.bin'), 'no partial file under the real name')
  t.equal(await readFile(join(work, 'other.txt'), 'utf8'), 'kept', 'the files there as they were')
  // Its tree's lock went with it: the next session on the tree does not wait for it.
  const log: string[] = []
  const next = await startServer(t, work, { log })
  const again = spawnDsync(['push', home, next.url])
  t.teardown(() => void again.child.kill('SIGKILL'))
  const { value: pushed } = await within(START_MS, 'the next push', again.exited)
  t.equal(pushed, 0, `the next push completes (stderr: ${again.stderr.trim()})`)
  t.notMatch(again.stderr, /waiting for another/i, 'without waiting for a session that is gone')
  t.ok((await readFile(join(work, 'big.bin'))).equals(big), 'and the new file is there')
})

t.test('SIGTERM to a pulling client: exit 130, no temp file, no partial file, and the next pull runs at once', async (t) => {
  const big = randomBytes(32, BIG)
  const served = await tempTree(t, { 'big.bin': big })
  const local = await tempTree(t)
  const server = await startServer(t, served)
  const client = spawnDsync(['pull', server.url, local, '--bwlimit', '256K'])
  t.teardown(() => void client.child.kill('SIGKILL'))
  await within(START_MS, 'the pull to start writing', transferring(local))
  client.child.kill('SIGTERM')
  const { value: code } = await within(10_000, 'the client to exit', client.exited)
  t.equal(code, 130, `exit 130, as for Ctrl+C (stderr: ${client.stderr.trim()})`)
  t.same(await tempLeftovers(local), [], 'no temp file left')
  t.notOk((await readdir(local)).includes('big.bin'), 'no partial file under the real name')
  const again = spawnDsync(['pull', server.url, local])
  t.teardown(() => void again.child.kill('SIGKILL'))
  const { value: pulled } = await within(START_MS, 'the next pull', again.exited)
  t.equal(pulled, 0, `the next pull completes (stderr: ${again.stderr.trim()})`)
  t.notMatch(again.stderr, /waiting for another/i, 'without waiting for the killed one')
  t.ok((await readFile(join(local, 'big.bin'))).equals(big), 'and the file is whole')
})
