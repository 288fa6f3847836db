/**
 * unchangedWhileRead: a file read for sending with no digest from before (a large file probed by
 * windows) must not pass for one version when it was written while being read.
 */
import t from 'tap'
import { appendFile, symlink, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { openFileSource, readWholeUnchanged, unchangedWhileRead } from '../../src/fs/index.js'
import { randomBytes } from '../support/random.js'
import { tempTree } from '../support/temp.js'

async function readAll(source: AsyncIterable<Uint8Array>, during?: () => Promise<void>): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const b of source) {
    parts.push(Buffer.from(b))
    if (parts.length === 1) await during?.()
  }
  return Buffer.concat(parts)
}

t.test('a file left alone reads through, every byte', async (t) => {
  const data = randomBytes(1, 3_000_000)
  const dir = await tempTree(t, { 'f.bin': data })
  const p = join(dir, 'f.bin')
  t.ok((await readAll(unchangedWhileRead(openFileSource(p), p, 'f.bin'))).equals(data))
})

t.test('a file appended to, or touched, while being read: SOURCE_CHANGED naming the file', async (t) => {
  for (const [what, change] of [
    ['appended to', (p: string) => appendFile(p, 'more')],
    ['given a new mtime', (p: string) => utimes(p, new Date(), new Date(Date.now() + 5_000))],
  ] as const) {
    const dir = await tempTree(t, { 'f.bin': randomBytes(2, 3_000_000) })
    const p = join(dir, 'f.bin')
    await t.rejects(readAll(unchangedWhileRead(openFileSource(p), p, 'sub/f.bin'), () => change(p)), { code: 'SOURCE_CHANGED', message: /^sub\/f\.bin: changed while it was being sent/ }, what)
  }
})

t.test('a small file read whole: every byte; undefined when it holds more than its listed size; a symlink or a missing file refused', async (t) => {
  const data = randomBytes(3, 40_000)
  const dir = await tempTree(t, { 'f.bin': data })
  const p = join(dir, 'f.bin')
  t.ok(Buffer.from((await readWholeUnchanged(p, data.length, 'f.bin'))!).equals(data), 'every byte')
  t.equal(await readWholeUnchanged(p, data.length - 1, 'f.bin'), undefined, 'grew past the size it was listed at: streamed instead')
  await symlink(p, join(dir, 'link'))
  await t.rejects(readWholeUnchanged(join(dir, 'link'), data.length, 'link'), { code: 'UNSAFE_PATH' }, 'a symlink is not followed')
  await t.rejects(readWholeUnchanged(join(dir, 'gone'), 10, 'gone'), { code: 'NOT_FOUND' })
})
