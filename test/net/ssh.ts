import t from 'tap'
import { connectTransport } from '../../src/net/index.js'
import { OPTIONS } from '../support/net.js'
import { REPO } from '../support/transports.js'

const fake = (mode: string) => `sh '${REPO}test/support/fake-remote.sh' ${mode}`
const open = (rsh: string, extra: { signal?: AbortSignal } = {}) =>
  connectTransport('ssh://remote.example/srv/notes', { token: null, role: 'pull', options: OPTIONS, rsh, onStderr: () => undefined, ...extra })

t.test('exit 127 (no dsync there): NETWORK that says to install it or pass --remote-dsync', async (t) => {
  await t.rejects(open(fake('exit127')), { code: 'NETWORK', message: /dsync not found on the remote host .*install it there or pass --remote-dsync/ })
})

t.test('exit 255 (ssh failed): NETWORK pointing at ssh\'s own message', async (t) => {
  await t.rejects(open(fake('exit255')), { code: 'NETWORK', message: /exit 255.*check the host, the user and the keys/ })
})

t.test('a remote shell command that does not exist: NETWORK naming it', async (t) => {
  await t.rejects(open('no-such-ssh-client-here'), { code: 'NETWORK', message: /cannot run the remote shell 'no-such-ssh-client-here': not found/ })
})

t.test('text on the remote stdout (a banner) instead of frames: BAD_MESSAGE, and the child is gone', async (t) => {
  await t.rejects(open(fake('garbage')), { code: 'BAD_MESSAGE' })
})

t.test('a remote announcing a 4 GiB frame: BAD_MESSAGE at once, nothing allocated for it', async (t) => {
  await t.rejects(open(fake('huge')), { code: 'BAD_MESSAGE', message: /4294967280-byte frame/ })
})

t.test('Ctrl+C while the remote says nothing (ssh waiting on a password): ABORTED, the child is stopped', async (t) => {
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 300)
  const started = Date.now()
  await t.rejects(open(fake('silent'), { signal: ac.signal }), { code: 'ABORTED' })
  t.ok(Date.now() - started < 4000, 'returns promptly: the child was killed, not waited for')
})
