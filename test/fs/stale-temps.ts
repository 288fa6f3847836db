import t from 'tap'
import { spawn } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { removeStaleTemps, tempFileOwner } from '../../src/fs/index.js'
import { tempTree } from '../support/temp.js'

t.test('temp files of dead processes and of this process go; a live writer keeps its own', async (t) => {
  const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'])
  t.teardown(() => void live.kill())
  const dead = spawn(process.execPath, ['-e', ''])
  await new Promise((r) => dead.on('exit', r))
  const names = [`.dsync-tmp-${dead.pid}-abc-x.bin`, `.dsync-tmp-${process.pid}-def-y.bin`, `.dsync-tmp-${live.pid}-ghi-z.bin`]
  const root = await tempTree(t, Object.fromEntries(names.map((n) => [`d/${n}`, 'partial'])))
  const removed = await removeStaleTemps(root, names.map((n) => `d/${n}`))
  t.equal(removed, 2)
  t.same(await readdir(`${root}/d`), [names[2]], "the live process's temp file stays")
})

t.test('tempFileOwner reads the pid of dsync temp names only', async (t) => {
  t.equal(tempFileOwner('.dsync-tmp-4242-lq3-abc-0-notes.txt'), 4242)
  t.equal(tempFileOwner('.dsync-tmp-notes.txt'), undefined)
  t.equal(tempFileOwner('notes.txt'), undefined)
})
