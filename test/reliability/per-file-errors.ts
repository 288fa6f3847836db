// Per-file errors (issue 7 item 6): a file or directory that cannot be read, a FIFO, a file that
// vanishes between the scan and the send — one clear line each, the rest synced, exit 10.
//
// Tests run as root, and root reads a chmod 000 file anyway. So the client runs as `nobody`
// (setpriv --reuid 65534), against files owned by root with mode 000: for that process they are
// truly unreadable, as they would be for a user on their own machine. The server stays in this
// process, as root.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { chmod, chown, readdir, readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Store } from '../../src/store/index.js'
import { runSender, sessionOptions, SYNC_CHUNK_PARAMS, SyncReport } from '../../src/sync/index.js'
import { hostileClient, spawnDsync, treeState, within } from '../support/hostile.js'
import { randomBytes } from '../support/random.js'
import { startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

const run = promisify(execFile)
const NOBODY = 65534

/** The command prefix that runs a client as `nobody`. */
const AS_NOBODY = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--']

/** Whether this process can run a client as `nobody` (root, with setpriv); says so if not. */
async function canRunAsNobody(t: Test): Promise<boolean> {
  const setpriv = await run('setpriv', ['--version']).then(() => true, () => false)
  if (setpriv && process.getuid?.() === 0) return true
  t.comment('skipped: needs root and setpriv to run the client as another user')
  return false
}

async function chownTree(root: string, uid: number, rel = ''): Promise<void> {
  await chown(join(root, rel), uid, uid)
  for (const d of await readdir(join(root, rel), { withFileTypes: true })) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`
    if (d.isDirectory()) await chownTree(root, uid, p)
    else await chown(join(root, p), uid, uid)
  }
}

t.test('unreadable file, unreadable directory, FIFO: one line each, the rest synced, exit 10', async (t) => {
  if (!(await canRunAsNobody(t))) return
  const home = await tempTree(t, { 'a.txt': 'alpha', 'sub/b.txt': 'beta', 'locked.txt': 'secret', 'closed/inner.txt': 'inner' })
  await run('mkfifo', [join(home, 'fifo')])
  await chownTree(home, NOBODY)
  await chown(join(home, 'locked.txt'), 0, 0)
  await chmod(join(home, 'locked.txt'), 0o000)
  await chown(join(home, 'closed'), 0, 0)
  await chmod(join(home, 'closed'), 0o000)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  const cli = spawnDsync(['push', home, server.url, '-v'], {}, AS_NOBODY)
  const { value: code } = await within(30_000, 'the push as nobody', cli.exited)
  const out = `${cli.stdout}\n${cli.stderr}`
  t.equal(code, 10, `exit code 10 (partial); output:\n${out}`)
  for (const name of ['locked.txt', 'closed', 'fifo']) {
    const lines = out.split('\n').filter((l) => l.includes(name) && !l.includes('inner.txt'))
    t.ok(lines.length >= 1, `a line names ${name}: ${JSON.stringify(lines)}`)
  }
  t.same(await readFile(join(work, 'a.txt'), 'utf8'), 'alpha', 'a.txt synced')
  t.same(await readFile(join(work, 'sub/b.txt'), 'utf8'), 'beta', 'sub/b.txt synced')
  await t.rejects(readFile(join(work, 'locked.txt')), 'the unreadable file is not on the server')
})

t.test('--delete keeps what the sender could not read: everything under a directory it could not list, at any depth', async (t) => {
  if (!(await canRunAsNobody(t))) return
  const home = await tempTree(t, { 'a.txt': 'alpha', 'locked.txt': 'secret', 'closed/inner.txt': 'inner', 'closed/deep/more.txt': 'more' })
  await chownTree(home, NOBODY)
  const work = await tempTree(t)
  const server = await startServer(t, work)
  // First as nobody with everything readable: the server records every file's base.
  const first = spawnDsync(['push', home, server.url], {}, AS_NOBODY)
  t.equal((await within(30_000, 'the first push', first.exited)).value, 0)
  await chown(join(home, 'locked.txt'), 0, 0)
  await chmod(join(home, 'locked.txt'), 0o000)
  await chown(join(home, 'closed'), 0, 0)
  await chmod(join(home, 'closed'), 0o000)
  const cli = spawnDsync(['push', home, server.url, '--delete', '-v'], {}, AS_NOBODY)
  const { value: code } = await within(30_000, 'the push as nobody', cli.exited)
  t.equal(code, 10, `partial: ${cli.stdout}${cli.stderr}`)
  t.notMatch(cli.stdout, /deleted/, 'nothing deleted')
  t.equal(await readFile(join(work, 'locked.txt'), 'utf8'), 'secret', 'the unreadable file stays on the server')
  t.equal(await readFile(join(work, 'closed/inner.txt'), 'utf8'), 'inner', 'and what the unreadable directory holds')
  t.equal(await readFile(join(work, 'closed/deep/more.txt'), 'utf8'), 'more', 'at any depth')
  t.equal(await readFile(join(work, 'a.txt'), 'utf8'), 'alpha')
})

t.test('a file that vanishes between the scan and the send: an error for it, the rest synced', async (t) => {
  // Over 1 MiB: streamed when sent, so read again then (a small file is sent from the bytes
  // read for its chunk list, and its removal after that changes nothing of what is sent).
  const home = await tempTree(t, { 'a.txt': 'alpha', 'gone.bin': randomBytes(9, 3_000_000), 'z.txt': 'zeta' })
  const work = await tempTree(t)
  const server = await startServer(t, work)
  const channel = await hostileClient(server.url)
  // The sender's channel, with a hook: once it has answered gone.bin's want (its scan is
  // long done), the file is deleted; the plan that follows makes the sender open it.
  let goneId = -1
  let deleted = false
  const hooked = {
    get stats() { return channel.stats },
    close: channel.close.bind(channel),
    fail: channel.fail.bind(channel),
    messages: () => channel.messages(),
    async send(m: Parameters<typeof channel.send>[0]) {
      await channel.send(m)
      // (A new path: its first answer is a probe, PROTOCOL.md §4.6.)
      if (((m.t === 'chunks' && m.more !== true) || m.t === 'probe') && m.id === goneId && !deleted) {
        deleted = true
        await unlink(join(home, 'gone.bin'))
      }
    },
  }
  const seen = channel.messages.bind(channel)
  hooked.messages = async function* () {
    for await (const m of seen()) {
      if (m.t === 'want' && m.path === 'gone.bin') goneId = m.id
      yield m
    }
  }
  const store = await Store.open(home, { params: SYNC_CHUNK_PARAMS })
  t.teardown(() => store.close())
  const report = new SyncReport()
  await within(20_000, 'the push', runSender(hooked, { root: home, store, params: SYNC_CHUNK_PARAMS, options: sessionOptions(), report, signal: new AbortController().signal }))
  channel.close()
  const gone = report.events.filter((e) => e.path === 'gone.bin')
  t.ok(gone.some((e) => e.action === 'error'), `an error is reported for gone.bin: ${JSON.stringify(gone.map((e) => [e.action, e.code, e.message]))}`)
  t.ok(report.summary(channel.stats, 1).errors >= 1, 'counted as an error (the CLI exits 10)')
  const state = await treeState(work)
  t.ok(state['a.txt'] !== undefined && state['z.txt'] !== undefined, 'the other files are synced')
  t.equal(state['gone.bin'], undefined, 'no partial gone.bin on the server')
})
