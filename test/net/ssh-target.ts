import t from 'tap'
import { isSshTarget, parseSshTarget, splitCommand, sshCommand } from '../../src/net/index.js'

t.test('ssh:// URLs: user, port, absolute and home-relative paths (as git reads them)', async (t) => {
  t.strictSame(parseSshTarget('ssh://me@work.example:2222/srv/notes'), { destination: 'me@work.example', port: 2222, path: '/srv/notes' })
  t.strictSame(parseSshTarget('ssh://work.example/srv/my%20notes'), { destination: 'work.example', path: '/srv/my notes' })
  t.strictSame(parseSshTarget('ssh://work.example/~/notes'), { destination: 'work.example', path: 'notes' })
  t.strictSame(parseSshTarget('ssh://work.example/~'), { destination: 'work.example', path: '.' })
  t.strictSame(parseSshTarget('ssh://[::1]:22/x'), { destination: '::1', port: 22, path: '/x' })
})

t.test("rsync's host:path: relative to the remote home, host: is the home itself", async (t) => {
  t.strictSame(parseSshTarget('work.example:notes'), { destination: 'work.example', path: 'notes' })
  t.strictSame(parseSshTarget('me@work.example:/srv/notes'), { destination: 'me@work.example', path: '/srv/notes' })
  t.strictSame(parseSshTarget('work:'), { destination: 'work', path: '.' })
  t.strictSame(parseSshTarget('work:~/a:b'), { destination: 'work', path: 'a:b' })
  t.strictSame(parseSshTarget('[::1]:x'), { destination: '::1', path: 'x' })
})

t.test('which arguments are ssh targets: never a ws URL, never a path with a slash before the colon', async (t) => {
  for (const yes of ['ssh://h/p', 'SSH://h/p', 'h:p', 'u@h:', 'h:/abs']) t.ok(isSshTarget(yes), yes)
  for (const no of ['ws://h:8730/x', 'wss://h/x', './a:b', '/tmp/a:b', 'notes', 'a b:c', 'http://h:80/']) t.notOk(isSshTarget(no), no)
})

t.test('bad targets are USAGE errors that say what is wrong', async (t) => {
  t.throws(() => parseSshTarget('ssh://host'), { code: 'USAGE', message: /name the remote directory/ })
  t.throws(() => parseSshTarget('ssh://u:pw@host/x'), { code: 'USAGE', message: /no password/ })
  t.throws(() => parseSshTarget('-oProxyCommand=evil:x'), { code: 'USAGE', message: /may not start with '-'/ }, 'no option injection through the host')
  t.throws(() => parseSshTarget('ssh://-oProxyCommand=evil/x'), { code: 'USAGE' })
})

t.test('-e/--rsh is split as rsync splits it: spaces, single and double quotes, no shell', async (t) => {
  t.strictSame(splitCommand('ssh -p 2222'), ['ssh', '-p', '2222'])
  t.strictSame(splitCommand(`ssh  -i '/keys/my key' -o "ProxyJump=a b"`), ['ssh', '-i', '/keys/my key', '-o', 'ProxyJump=a b'])
  t.strictSame(splitCommand('ssh -o X=$HOME *'), ['ssh', '-o', 'X=$HOME', '*'], 'no expansion')
  t.strictSame(splitCommand(`ssh ''`), ['ssh', ''])
  t.throws(() => splitCommand(`ssh -i 'x`), { code: 'USAGE', message: /unbalanced/ })
  t.throws(() => splitCommand('  '), { code: 'USAGE' })
})

t.test('the command line: rsh, -p PORT, destination, then the remote command with the path quoted', async (t) => {
  t.strictSame(sshCommand(parseSshTarget('ssh://me@h:2222/srv/my notes')), ['ssh', '-p', '2222', 'me@h', `dsync serve --stdio '--root=/srv/my notes'`])
  t.strictSame(
    sshCommand(parseSshTarget("h:it's"), { rsh: 'ssh -C', remoteDsync: 'node /opt/dsync/bin/dsync.js' }),
    ['ssh', '-C', 'h', `node /opt/dsync/bin/dsync.js serve --stdio '--root=it'\\''s'`],
  )
  t.strictSame(sshCommand(parseSshTarget('h:$(reboot)')).at(-1), `dsync serve --stdio '--root=$(reboot)'`, 'the remote shell expands nothing in the path')
})
