import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
// The package by its own name, through package.json's exports map: what a user's import resolves to.
import { delta, patch, pull, push, serve, signature, similarity, type SyncResult } from 'dsync-node'
import { randomBytes } from './support/random.js'
import { tempTree } from './support/temp.js'

// What protects the library API of the README: the seven command functions, imported as a user
// imports them, work on real files and against a real server.
const base = randomBytes(9, 300_000)
const edited = Buffer.concat([base.subarray(0, 100_000), Buffer.from('an edit in the middle'), base.subarray(100_000)])

t.test('similarity, signature, delta and patch on files', async (t) => {
  const dir = await tempTree(t, { 'old.bin': base, 'new.bin': edited })
  const p = (name: string) => join(dir, name)
  const s = await similarity(p('old.bin'), p('new.bin'))
  t.equal(s.verdict, 'delta')
  t.ok(s.metrics.dice > 0.8, `dice ${s.metrics.dice}`)
  const sig = await signature(p('old.bin'), p('old.sig'))
  t.equal(sig.seedSize, base.length)
  t.equal(sig.bytes, (await readFile(p('old.sig'))).length)
  const stats = await delta(p('old.sig'), p('new.bin'), p('new.delta'))
  t.equal(stats.targetSize, edited.length)
  t.ok(stats.encodedBytes < edited.length / 10, `delta of ${stats.encodedBytes} bytes`)
  const rebuilt = await patch(p('old.bin'), p('new.delta'), p('rebuilt.bin'))
  t.equal(rebuilt.size, edited.length)
  t.ok((await readFile(p('rebuilt.bin'))).equals(edited))
  await t.rejects(similarity(p('old.bin'), p('missing')), { code: 'NOT_FOUND' })
})

t.test('push and pull against serve on 127.0.0.1, port 0', async (t) => {
  const served = await tempTree(t, {})
  const local = await tempTree(t, { 'a.bin': base, 'notes/b.txt': 'hello\n' })
  const server = await serve({ root: served, port: 0 })
  t.teardown(() => server.close())
  t.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+/)
  const pushed: SyncResult = await push(local, server.url)
  t.equal(pushed.summary.errors, 0)
  t.ok((await readFile(join(served, 'a.bin'))).equals(base))
  await writeFile(join(served, 'a.bin'), edited)
  const events: string[] = []
  const pulled = await pull(server.url, local, { onEvent: (e) => events.push(`${e.action} ${e.path}`) })
  t.equal(pulled.summary.errors, 0)
  t.ok((await readFile(join(local, 'a.bin'))).equals(edited))
  t.ok(events.some((e) => e.endsWith(' a.bin') && !e.startsWith('unchanged')), events.join(', '))
})
