import t from 'tap'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startSshd } from '../support/sshd.js'
import { describeTree } from '../support/sync.js'
import { tempTree } from '../support/temp.js'
import { REMOTE_DSYNC, runDsync } from '../support/transports.js'

// The ssh transport through OpenSSH's own client and server on 127.0.0.1: what users run.
t.test('push and pull through a real sshd: ssh:// with a port, and host:path with -e "ssh -p PORT"', async (t) => {
  const sshd = await startSshd(t)
  const home = await tempTree(t, { 'notes/a.md': 'alpha\n'.repeat(5000), 'b.bin': Buffer.alloc(200_000, 7) })
  const remote = join(await tempTree(t), 'work')
  const url = `ssh://${sshd.user}@127.0.0.1:${sshd.port}${remote}`
  const r = await runDsync(['push', '--stats', home, url, '-e', `ssh ${sshd.sshOptions}`, '--remote-dsync', REMOTE_DSYNC])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /2 files transferred/)
  t.same(await describeTree(remote), await describeTree(home))
  await writeFile(join(remote, 'notes/a.md'), 'alpha\n'.repeat(5000) + 'edited on the remote host\n')
  const local = join(await tempTree(t), 'copy')
  const p = await runDsync(['pull', '-v', `127.0.0.1:${remote}`, local, '-e', `ssh -p ${sshd.port} ${sshd.sshOptions}`, '--remote-dsync', REMOTE_DSYNC])
  t.equal(p.code, 0, p.stderr)
  t.same(await describeTree(local), await describeTree(remote))
})

t.test('through a real sshd, a remote host without dsync: exit 6 and the advice to pass --remote-dsync', async (t) => {
  const sshd = await startSshd(t)
  const home = await tempTree(t, { 'x.txt': 'x' })
  const r = await runDsync(['push', home, `ssh://127.0.0.1:${sshd.port}/tmp/nowhere`, '-e', `ssh ${sshd.sshOptions}`, '--remote-dsync', 'dsync-is-not-installed-here'])
  t.equal(r.code, 6)
  t.match(r.stderr, /dsync not found on the remote host.*--remote-dsync/)
})
