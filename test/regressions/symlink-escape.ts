import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { resolveInside, walkTree } from '../../src/fs/index.js'
import { collect } from '../support/random.js'
import { tempTree } from '../support/temp.js'

// A peer that can make the receiver hold a symlink `evil -> /outside` and then send a file at
// `evil/payload` must not get `/outside/payload` written. resolveInside is the gate every
// write path goes through.
t.test('a write through a planted symlinked directory is refused; nothing lands outside', async (t) => {
  const outside = await tempTree(t, { 'payload': 'original' })
  const root = await tempTree(t)
  await symlink(outside, join(root, 'evil'))
  await mkdir(join(root, 'ok/deeper'), { recursive: true })
  await symlink(outside, join(root, 'ok/deeper/evil2'))
  for (const rel of ['evil/payload', 'evil/new/x', 'ok/deeper/evil2/payload', 'evil']) {
    let written = false
    try {
      await writeFile(await resolveInside(root, rel), 'pwned')
      written = true
    } catch (err) {
      t.match(err, { code: 'UNSAFE_PATH' }, rel)
    }
    t.notOk(written, `${rel} refused`)
  }
  t.equal(await readFile(join(outside, 'payload'), 'utf8'), 'original')
})

t.test('hostile wire paths never resolve outside the root', async (t) => {
  const root = await tempTree(t)
  for (const rel of ['../x', '/etc/passwd', 'a/../../x', 'a\\..\\x', 'a\0b', '.', 'a/./b', '', 'x'.repeat(300), '.dsync/state.mdb']) {
    await t.rejects(resolveInside(root, rel), { code: 'UNSAFE_PATH' }, JSON.stringify(rel))
  }
})

t.test('the walk reports a symlink to a directory outside the root and does not enter it', async (t) => {
  const outside = await tempTree(t, { 'secret.txt': 's', 'sub/more.txt': 'm' })
  const root = await tempTree(t, { 'mine.txt': 'x' })
  await symlink(outside, join(root, 'door'))
  const es = await collect(walkTree(root))
  t.same(es.map((e) => e.path), ['door', 'mine.txt'])
})
