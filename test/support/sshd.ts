import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { access, chmod, mkdir, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { tempTree } from './temp.js'

const run = promisify(execFile)
const SSHD = '/usr/sbin/sshd'

/**
 * Makes sure Debian's openssh-server is installed: installs it with apt-get when it is missing
 * (waiting for a dpkg lock another install holds; `apt-get update` first if the package is
 * unknown). Throws with what to do when that fails: the test does not skip.
 */
async function ensureSshd(): Promise<void> {
  if (await access(SSHD).then(() => true, () => false)) return
  const install = () => run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', '-q', 'openssh-server'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 << 20,
  })
  try {
    await install()
  } catch {
    try {
      await run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'update', '-q'], { maxBuffer: 64 << 20 })
      await install()
    } catch (err) {
      throw new Error(`the sshd test needs ${SSHD}: \`apt-get install -y openssh-server\` failed (run it as root): ${String(err)}`)
    }
  }
}

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const port = (srv.address() as { port: number }).port
  await new Promise<void>((resolve) => srv.close(() => resolve()))
  return port
}

async function waitForPort(port: number, sshd: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (sshd.exitCode !== null) throw new Error(`sshd exited with ${sshd.exitCode}: ${log()}`)
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy()
        resolve(true)
      })
      s.on('error', () => resolve(false))
    })
    if (up) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`sshd did not listen on 127.0.0.1:${port}: ${log()}`)
}

/** A real sshd on 127.0.0.1 (its own host key, config and authorized key in a temp dir), stopped
 *  when the test ends; and the ssh options that log in to it as this user. */
export async function startSshd(t: Test): Promise<{ port: number; user: string; sshOptions: string }> {
  await ensureSshd()
  const dir = await tempTree(t)
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')])
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'user_key')])
  await run('cp', [join(dir, 'user_key.pub'), join(dir, 'authorized_keys')])
  await chmod(join(dir, 'authorized_keys'), 0o600)
  await mkdir('/run/sshd', { recursive: true }) // privilege separation directory
  const port = await freePort()
  const config = join(dir, 'sshd_config')
  await writeFile(config, [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_key')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'StrictModes no',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin prohibit-password',
    'UsePAM no',
    'LogLevel ERROR',
    '',
  ].join('\n'))
  let log = ''
  const sshd = spawn(SSHD, ['-D', '-e', '-f', config, '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] })
  sshd.stderr!.on('data', (b: Buffer) => (log += b))
  t.teardown(() => {
    sshd.kill()
  })
  await waitForPort(port, sshd, () => log)
  const key = join(dir, 'user_key')
  return {
    port,
    user: userInfo().username,
    sshOptions: `-i ${key} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR`,
  }
}
