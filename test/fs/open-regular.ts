import t from 'tap'
import { execFileSync } from 'node:child_process'
import { lstat, readFile, stat, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { openRegular, setMetadata } from '../../src/fs/index.js'
import { tempTree } from '../support/temp.js'

t.test('noFollow refuses a symlink; without it the target is opened', async (t) => {
  const outside = await tempTree(t, { 'secret.txt': 'outside' })
  const root = await tempTree(t, { 'a.txt': 'inside' })
  await symlink(join(outside, 'secret.txt'), join(root, 'link'))
  await t.rejects(openRegular(join(root, 'link'), { noFollow: true }), { code: 'UNSAFE_PATH', message: /symlink/ })
  const fh = await openRegular(join(root, 'link'))
  t.equal((await fh.readFile('utf8')), 'outside')
  await fh.close()
})

t.test('a FIFO is refused at once (no blocking open), a directory unless asked for', async (t) => {
  const root = await tempTree(t)
  execFileSync('mkfifo', [join(root, 'fifo')])
  await t.rejects(openRegular(join(root, 'fifo'), { noFollow: true }), { code: 'NOT_A_FILE', message: /FIFO/ })
  await t.rejects(openRegular(root), { code: 'NOT_A_FILE', message: /directory/ })
  const dh = await openRegular(root, { directory: true, noFollow: true })
  await dh.close()
})

t.test('setMetadata never changes the target of a symlink (issue 7: chmod outside the root)', async (t) => {
  const outside = await tempTree(t, { 'victim.txt': 'keep me' })
  const root = await tempTree(t, { 'f.txt': 'mine' })
  const victim = join(outside, 'victim.txt')
  const before = await stat(victim)
  await symlink(victim, join(root, 'f'))
  await t.rejects(setMetadata(join(root, 'f'), { mode: 0o777, mtimeMs: 1_000_000 }), { code: 'UNSAFE_PATH' })
  const after = await stat(victim)
  t.equal(after.mode, before.mode, 'mode of the outside file unchanged')
  t.equal(after.mtimeMs, before.mtimeMs, 'mtime of the outside file unchanged')
  t.equal(await readFile(victim, 'utf8'), 'keep me')
  await setMetadata(join(root, 'f.txt'), { mode: 0o600, mtimeMs: 1_234_567_000 })
  const own = await lstat(join(root, 'f.txt'))
  t.equal(own.mode & 0o7777, 0o600)
  t.equal(Math.round(own.mtimeMs), 1_234_567_000)
})
