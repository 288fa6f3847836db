import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runCli } from '../support/cli.js'
import { describeTree } from '../support/sync.js'
import { tempTree } from '../support/temp.js'
import { LOCAL_RSH, REMOTE_DSYNC, runDsync } from '../support/transports.js'

// The real CLI on both ends: `dsync push/pull` here, `dsync serve --stdio` started through -e as
// ssh would start it on the remote host.
const SSH = ['-e', LOCAL_RSH, '--remote-dsync', REMOTE_DSYNC]

t.test('push to host:path creates the remote tree; pull from ssh:// brings it back; -v and --stats as with ws', async (t) => {
  const home = await tempTree(t, { 'a.txt': 'alpha\n'.repeat(3000), 'b/c.txt': 'gamma' })
  const remote = join(await tempTree(t), 'not', 'yet')
  const r = await runDsync(['push', '-v', '--stats', home, `localhost:${remote}`, ...SSH])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^new\s+a\.txt/m)
  t.match(r.stdout, /2 files transferred/)
  t.equal(r.stderr, '', 'the remote side is quiet: the client reports')
  t.same(await describeTree(remote), await describeTree(home))
  await writeFile(join(home, 'a.txt'), 'alpha\n'.repeat(3000) + 'omega\n')
  const again = await runDsync(['push', '--json', home, `localhost:${remote}`, ...SSH])
  t.equal(again.code, 0, again.stderr)
  t.match(JSON.parse(again.stdout).events.find((e: { path: string }) => e.path === 'a.txt'), { action: 'delta', seed: 'a.txt' })
  const mirror = join(await tempTree(t), 'mirror')
  const p = await runDsync(['pull', `ssh://localhost${remote}`, mirror, ...SSH])
  t.equal(p.code, 0, p.stderr)
  t.same(await describeTree(mirror), await describeTree(home))
})

t.test('DSYNC_RSH stands for -e, as RSYNC_RSH does', async (t) => {
  const home = await tempTree(t, { 'x.txt': 'x' })
  const remote = await tempTree(t)
  const r = await runDsync(['push', home, `localhost:${remote}`, '--remote-dsync', REMOTE_DSYNC], { env: { DSYNC_RSH: LOCAL_RSH } })
  t.equal(r.code, 0, r.stderr)
  t.same(await describeTree(remote), await describeTree(home))
})

t.test('errors over ssh: no dsync there 6, missing remote directory 3, token options 2; one clear line', async (t) => {
  const home = await tempTree(t, { 'x.txt': 'x' })
  const missing = await runDsync(['push', home, 'localhost:/tmp', '-e', LOCAL_RSH, '--remote-dsync', 'no-such-dsync-here'])
  t.equal(missing.code, 6)
  t.match(missing.stderr, /dsync: localhost:\/tmp: dsync not found on the remote host .*pass --remote-dsync/)
  const nodir = await runDsync(['pull', `localhost:${join(home, 'nope')}`, join(home, 'out'), ...SSH])
  t.equal(nodir.code, 3, nodir.stderr)
  t.match(nodir.stderr, /nope/)
  const token = await runCli(['push', home, 'localhost:/tmp', '--token-file', 'x', ...SSH])
  t.equal(token.code, 2)
  t.match(token.stderr, /ssh authenticates/)
  const rshOnWs = await runCli(['push', home, 'ws://127.0.0.1:1/', '-e', 'ssh'])
  t.equal(rshOnWs.code, 2)
  t.match(rshOnWs.stderr, /-e\/--rsh and --remote-dsync are for ssh/)
})
