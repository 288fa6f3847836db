// A second client waiting for a busy tree is told so (issue 7: "waiting for another session on
// this tree") instead of hanging silently, and goes on once the first session ends.
import t from 'tap'
import { hostileClient, spawnDsync, vanish, within } from '../support/hostile.js'
import { startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

t.test('a push to a tree another session holds says it is waiting, then completes', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'hello', 'sub/b.txt': 'world' })
  const work = await tempTree(t)
  const log: string[] = []
  const server = await startServer(t, work, { log })
  // An authenticated pusher that says nothing holds the tree (until the idle timeout).
  const holder = await hostileClient(server.url)
  await new Promise((r) => setTimeout(r, 300))
  const cli = spawnDsync(['push', home, server.url])
  t.teardown(() => void cli.child.kill('SIGKILL'))
  // The bound starts once the CLI's session is in: a node process can take seconds to start
  // on a loaded machine, and the holder must still be there when it arrives.
  const started = async (): Promise<void> => {
    while (log.filter((l) => l.includes('session started')).length < 2) await new Promise((r) => setTimeout(r, 20))
  }
  await within(30_000, 'the CLI to connect', started())
  await t.resolves(within(5000, 'the waiting message', cli.waitFor(/waiting for another session/i)), 'stderr says it is waiting for another session')
  t.match(cli.stderr, /waiting for another session/i, `on stderr: ${JSON.stringify(cli.stderr)} / stdout ${JSON.stringify(cli.stdout)}`)
  vanish(holder)
  const { value: code } = await within(10_000, 'the waiting push to finish', cli.exited)
  t.equal(code, 0, `the push completes once the holder is gone (stderr: ${cli.stderr.trim()})`)
})
