import { execFile } from 'node:child_process'
import { mkdir, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { chunkParams, digestBytes } from '../../src/index.js'
import { Store, type PairBase } from '../../src/store/index.js'
import { randomBytes } from '../support/random.js'
import { TEST_PARAMS, recordOf } from '../support/records.js'
import { tempTree } from '../support/temp.js'

const params = TEST_PARAMS

/** A folder's summary (§4.9), made up: 16 bytes of `n`. */
const summary = (n: number): Uint8Array => new Uint8Array(16).fill(n)

t.test('a store survives close and reopen, records and bases intact', async (t) => {
  const root = await tempTree(t)
  const rec = recordOf('docs/a.bin', randomBytes(1, 5000), params, { mtimeMs: 1234.5, mode: 0o755 })
  let store = await Store.open(root, { params })
  await store.put(rec)
  await store.setBase('docs/a.bin', { digest: rec.digest })
  await store.close()
  store = await Store.open(root, { params })
  t.teardown(() => store.close())
  t.same(store.get('docs/a.bin'), rec)
  t.same(store.getBase('docs/a.bin'), { digest: rec.digest })
  t.equal(store.get('missing'), undefined)
  t.equal(store.getBase('missing'), undefined)
  await store.deleteBase('docs/a.bin')
  t.equal(store.getBase('docs/a.bin'), undefined)
})

t.test('put with base records the digest as the base in the same write', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const rec = recordOf('got/it', randomBytes(15, 500))
  await store.put(rec, { base: true })
  t.same(store.getBase('got/it'), { digest: rec.digest, size: rec.size, mtimeMs: rec.mtimeMs })
  await store.put(recordOf('other', randomBytes(16, 500)))
  t.equal(store.getBase('other'), undefined, 'not without the option')
})

t.test('a folder\'s cover of the bases holds until a base under it is written or removed; of the pair bases with a peer, until any is', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const covers: [string, Uint8Array][] = [['', summary(1)], ['a', summary(2)], ['a/b', summary(3)], ['z', summary(4)]]
  const writes: [string, string, () => Promise<void>][] = [
    ['setBase', 'a', () => store.setBase('a/x', { size: 1, mtimeMs: 1 })],
    ['setBases', 'a/b', () => store.setBases([['a/b/y', { size: 2, mtimeMs: 2 }]])],
    ['deleteBase', 'a', () => store.deleteBase('a/x')],
    ['put with base', 'a/b', () => store.put(recordOf('a/b/c', randomBytes(3, 100)), { base: true })],
  ]
  for (const [what, folder, write] of writes) {
    await store.setBases([], covers)
    t.ok(covers.every(([dir, hash]) => store.covered(dir, hash)), 'all noted')
    await write()
    for (const [dir, hash] of covers) {
      const under = folder === dir || folder.startsWith(`${dir}/`) || dir === ''
      t.equal(store.covered(dir, hash), !under, `${what} under ${folder}: ${dir === '' ? 'the root' : dir} ${under ? 'uncovered' : 'still covered'}`)
    }
  }
  await store.setBases([], covers)
  t.notOk(store.covered('a', summary(9)), 'a cover is of one summary')
  await store.put(recordOf('a/d', randomBytes(4, 100)))
  t.ok(store.covered('a', summary(2)), 'a record without a base keeps it')
  // A build before the covers drops the meta key they hang on at every base write: none holds.
  const { open } = (await import('lmdb'))
  const env = open({ path: join(root, '.dsync', 'state.mdb'), maxDbs: 16, compression: false })
  await env.openDB({ name: 'meta' }).remove('basesCover')
  await env.close()
  t.notOk(store.covered('z', summary(4)), 'an older build\'s base write voids every cover')
  await store.setBases([], [['z', summary(4)]])
  t.ok(store.covered('z', summary(4)) && !store.covered('a', summary(2)), 'noted anew, the earlier ones gone')

  const pairs = store.pairBases()
  const base: PairBase = { kind: 'file', size: 1, mtimeMs: 1, mode: 0o644 }
  await pairs.update('peer1', new Map(), covers)
  await pairs.update('peer2', new Map(), covers)
  t.ok(covers.every(([dir, hash]) => pairs.covered('peer1', dir, hash)), 'pair covers noted')
  await pairs.update('peer1', new Map())
  t.ok(pairs.covered('peer1', 'a/b', summary(3)), 'no change keeps them')
  await pairs.update('peer1', new Map([['a/x', base]]))
  t.same(covers.map(([dir, hash]) => pairs.covered('peer1', dir, hash)), [false, false, true, true], 'a change voids the covers of its folders, not those below or beside')
  await pairs.update('peer1', new Map([['z/y', null]]))
  t.notOk(pairs.covered('peer1', 'z', summary(4)), 'a removal too')
  t.ok(covers.every(([dir, hash]) => pairs.covered('peer2', dir, hash)), 'another peer\'s stay')
  t.notOk(pairs.covered('peer2', 'a', summary(9)), 'a pair cover is of one summary')
  const long = Array.from({ length: 5 }, (_, i) => `${i}`.padEnd(250, 'd')).join('/') // over 1024 bytes: keyed by its hash
  await pairs.update('peer2', new Map(), [[long, summary(5)]])
  t.ok(pairs.covered('peer2', long, summary(5)), 'a long folder\'s cover, keyed by its hash')
  await pairs.update('peer2', new Map([[`${long}/x`, base]]))
  t.notOk(pairs.covered('peer2', long, summary(5)), 'voided as a short one\'s')
})

t.test('put and delete keep records, digests and the sampled index consistent', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const one = randomBytes(2, 8000)
  const two = randomBytes(3, 8000)
  const a = recordOf('a', one)
  await store.put(a)
  await store.put(recordOf('b', one))
  t.same(store.findByDigest(a.digest), ['a', 'b'], 'both exact copies')
  t.same(store.candidates(a.chunks).map((c) => c.path), ['a', 'b'], 'equal scores tie-break by path')
  t.equal(store.candidates(a.chunks)[0]!.score, 1)

  await store.put(recordOf('a', two))
  t.same(store.findByDigest(a.digest), ['b'], 'the overwritten content no longer points at a')
  t.same(store.candidates(a.chunks).map((c) => c.path), ['b'], 'nor do its fingerprints')
  t.same(store.findByDigest(digestBytes(two)), ['a'])

  await store.delete('b')
  t.same(store.findByDigest(a.digest), [])
  t.same(store.candidates(a.chunks), [])
  t.same(store.recordPaths(), ['a'])
  await store.delete('never-there')
  t.same(store.recordPaths(), ['a'])
})

t.test('metadata-only put keeps the index as it was', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const rec = recordOf('f', randomBytes(4, 3000))
  await store.put(rec)
  await store.put({ ...rec, mode: 0o600, mtimeMs: 99 })
  t.match(store.get('f'), { mode: 0o600, mtimeMs: 99, digest: rec.digest })
  t.same(store.findByDigest(rec.digest), ['f'])
  t.same(store.candidates(rec.chunks).map((c) => c.path), ['f'])
})

t.test('a renamed file is found by its digest anywhere in the tree', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  for (let i = 0; i < 50; i++) await store.put(recordOf(`dir${i % 5}/f${i}`, randomBytes(100 + i, 2000)))
  const moved = recordOf('old/place/report.pdf', randomBytes(7, 20000))
  await store.put(moved)
  t.same(store.findByDigest(moved.digest), ['old/place/report.pdf'])
  t.same(store.findByDigest(digestBytes(randomBytes(8, 10))), [])
})

t.test('paths longer than an lmdb key (up to 4096 bytes) are stored and indexed', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const long = Array.from({ length: 15 }, (_, i) => `${i}`.padEnd(250, 'x')).join('/')
  const rec = recordOf(long, randomBytes(9, 1000))
  await store.put(rec)
  await store.setBase(long, { digest: rec.digest })
  t.same(store.get(long), rec)
  t.same(store.getBase(long), { digest: rec.digest })
  t.same(store.findByDigest(rec.digest), [long])
  await store.delete(long)
  t.equal(store.get(long), undefined)
})

t.test('unsafe paths are refused before anything is written', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  await t.rejects(store.put(recordOf('../x', randomBytes(1, 10))), { code: 'UNSAFE_PATH' })
  await t.rejects(store.setBase('/abs', { digest: digestBytes(new Uint8Array(1)) }), { code: 'UNSAFE_PATH' })
  t.same(store.recordPaths(), [])
})

t.test('new chunk params drop records and the index but keep bases', async (t) => {
  const root = await tempTree(t)
  const rec = recordOf('f', randomBytes(10, 4000))
  let store = await Store.open(root, { params })
  await store.put(rec)
  await store.setBase('f', { digest: rec.digest, size: 4000, mtimeMs: 5 })
  await store.close()
  store = await Store.open(root, { params: chunkParams({ avg: 512 }) })
  t.teardown(() => store.close())
  t.equal(store.get('f'), undefined)
  t.same(store.findByDigest(rec.digest), [])
  t.same(store.candidates(rec.chunks), [])
  t.same(store.getBase('f'), { digest: rec.digest, size: 4000, mtimeMs: 5 })
})

t.test('a symlinked .dsync folder is refused', async (t) => {
  const root = await tempTree(t)
  const elsewhere = await tempTree(t)
  await symlink(elsewhere, join(root, '.dsync'))
  await t.rejects(Store.open(root, { params }), { code: 'UNSAFE_PATH', message: /state folder is a symlink/ })
})

t.test('two Stores on one root in one process share the data; closing one leaves the other working', async (t) => {
  const root = await tempTree(t)
  const s1 = await Store.open(root, { params })
  const s2 = await Store.open(root, { params })
  const a = recordOf('a', randomBytes(11, 3000))
  const b = recordOf('b', randomBytes(12, 3000))
  await Promise.all([s1.put(a), s2.put(b)])
  t.same(s2.get('a'), a)
  t.same(s1.get('b'), b)
  await s1.close()
  await s2.put(recordOf('c', randomBytes(13, 100)))
  t.same(s2.recordPaths().sort(), ['a', 'b', 'c'])
  t.same(s2.findByDigest(a.digest), ['a'])
  await s2.close()
})

t.test('two processes writing one store at once lose nothing', async (t) => {
  const root = await tempTree(t)
  await mkdir(join(root, 'x'))
  const storeModule = fileURLToPath(new URL('../../src/store/index.js', import.meta.url))
  const indexModule = fileURLToPath(new URL('../../src/index.js', import.meta.url))
  // Each child puts 200 records under its own prefix; ids come from one counter in lmdb.
  const child = (prefix: string) =>
    promisify(execFile)(process.execPath, [
      '--input-type=module',
      '-e',
      `const { Store } = await import(${JSON.stringify(storeModule)})
       const { chunkParams, digestBytes } = await import(${JSON.stringify(indexModule)})
       const params = chunkParams({ avg: 256 })
       const s = await Store.open(${JSON.stringify(root)}, { params })
       const ps = []
       for (let i = 0; i < 200; i++) {
         const data = new TextEncoder().encode(${JSON.stringify(prefix)} + i)
         ps.push(s.put({ path: ${JSON.stringify(prefix)} + '/' + i, size: data.length, mtimeMs: 1, mode: 420,
           digest: digestBytes(data), chunks: [] }))
       }
       await Promise.all(ps)
       await s.close()`,
    ])
  await Promise.all([child('p'), child('q')])
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const all = store.recordPaths()
  t.equal(all.length, 400)
  t.equal(new Set(all).size, 400, 'every record got its own id')
  t.same(store.findByDigest(digestBytes(new TextEncoder().encode('q17'))), ['q/17'])
})

t.test('a put that fails half-way leaves neither record nor index entries behind', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const good = recordOf('f', randomBytes(14, 3000))
  // A chunk length that cannot be encoded: the record write throws after the index was updated.
  const bad = { ...good, chunks: [...good.chunks, { offset: good.size, length: -1, fp: good.chunks[0]!.fp }] }
  await t.rejects(store.put(bad), { code: 'IO', message: /record of f/ })
  t.same(store.recordPaths(), [])
  t.same(store.findByDigest(good.digest), [])
  t.same(store.candidates(good.chunks), [])
  await store.put(good)
  t.same(store.findByDigest(good.digest), ['f'], 'the store still works')
})

t.test('puts made together share one transaction, and writes between them keep their order', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const a1 = recordOf('a', randomBytes(30, 4000))
  const a2 = recordOf('a', randomBytes(31, 4000))
  const b = recordOf('b', randomBytes(32, 4000))
  const c = recordOf('c', randomBytes(33, 4000))
  // All in one tick: a1 and b join one batch; the delete closes it, so a2 and c come after it.
  await Promise.all([store.put(a1, { base: true }), store.put(b), store.delete('a'), store.put(a2, { base: true }), store.put(c)])
  t.same(store.get('a'), a2, 'the put after the delete stands')
  t.same(store.findByDigest(a1.digest), [], 'the first content of a is gone from the index')
  t.same(store.findByDigest(a2.digest), ['a'])
  t.same(store.getBase('a'), { digest: a2.digest, size: a2.size, mtimeMs: a2.mtimeMs })
  t.same(store.recordPaths().sort(), ['a', 'b', 'c'])

  await Promise.all([store.put(recordOf('d', randomBytes(34, 100))), store.delete('d')])
  t.equal(store.get('d'), undefined, 'a delete right after a put of the same path wins')
})

t.test('puts made together take distinct ids, batch after batch, and void the covers of every folder their bases are in', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const covers: [string, Uint8Array][] = [['', summary(1)], ['p', summary(2)], ['p/q', summary(3)], ['r', summary(4)], ['s', summary(5)]]
  await store.setBases([], covers)
  // Two batches of three, one tick each: ids are taken from the counter each batch left.
  const first = ['p/q/1', 'p/q/2', 'p/3'].map((path, i) => recordOf(path, randomBytes(50 + i, 500 + i)))
  await Promise.all(first.map((r) => store.put(r, { base: true })))
  t.same(covers.map(([dir, hash]) => store.covered(dir, hash)), [false, false, false, true, true], 'the root, p and p/q uncovered; r and s still covered')
  const second = ['r/4', 'r/5', 'p/6'].map((path, i) => recordOf(path, randomBytes(60 + i, 600 + i)))
  await Promise.all(second.map((r) => store.put(r)))
  t.ok(store.covered('r', summary(4)), 'records without bases leave the covers')
  const all = [...first, ...second]
  // Files with the same id would find each other's content: each digest finds its own path only.
  for (const r of all) t.same(store.findByDigest(r.digest), [r.path], `${r.path} found by its own digest alone`)
  t.same(store.recordPaths().sort(), all.map((r) => r.path).sort())
  await store.delete('p/q/1')
  t.same(store.findByDigest(first[1]!.digest), ['p/q/2'], 'deleting one record leaves the others of its batch')
})

t.test('a put that fails fails the puts made with it (one transaction), and leaves nothing of any', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const one = recordOf('one', randomBytes(40, 3000))
  const two = recordOf('two', randomBytes(41, 3000))
  const bad = { ...one, path: 'bad', chunks: [...one.chunks, { offset: one.size, length: -1, fp: one.chunks[0]!.fp }] }
  const puts = [store.put(one), store.put(bad), store.put(two)]
  for (const p of puts) await t.rejects(p, { code: 'IO', message: /records? of 3 files/ })
  t.same(store.recordPaths(), [])
  t.same(store.findByDigest(one.digest), [])
  await store.put(two)
  t.same(store.recordPaths(), ['two'], 'the next put is a batch of its own')
})

t.test('a base of size and mtime alone (a quick-check match, no file read) round-trips', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  await store.setBase('q', { size: 12, mtimeMs: 1700000000123.5 })
  t.same(store.getBase('q'), { size: 12, mtimeMs: 1700000000123.5 })
  await t.rejects(store.setBase('none', {}), { code: 'BAD_DATA' }, 'a base must say something')
})

t.test('files by fingerprint prefix: a probe key finds the files indexing a fingerprint that starts with it, at the ends of the key space too', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const rec = recordOf('a', randomBytes(31, 200_000))
  const edge = (hex: string) => ({ offset: 0, length: 10, fp: hex as typeof rec.chunks[number]['fp'] })
  await store.put(rec)
  await store.put({ ...recordOf('low', randomBytes(32, 10)), chunks: [edge('00000000' + '11'.repeat(12))] })
  await store.put({ ...recordOf('high', randomBytes(33, 10)), chunks: [edge('ffffffff' + '22'.repeat(12))] })
  const key = (hex: string) => Buffer.from(hex.slice(0, 8), 'hex')
  const indexed = rec.chunks.map((c) => c.fp).filter((fp) => store.candidates([{ offset: 0, length: 1, fp }]).length > 0)
  t.ok(indexed.length > 0, 'some of a\'s fingerprints are indexed')
  t.same([...store.filesWithFingerprintPrefix([key(indexed[0]!)])], ['a'])
  t.same([...store.filesWithFingerprintPrefix([key('00000000')])], ['low'])
  t.same([...store.filesWithFingerprintPrefix([key('ffffffff')])], ['high'])
  t.same([...store.filesWithFingerprintPrefix([key('fffffffe'), key('00000001')])], [], 'a neighbouring prefix finds nothing')
  t.same(new Set(store.filesWithFingerprintPrefix([key('ffffffff'), key('00000000')])), new Set(['low', 'high']))
  await store.delete('high')
  t.same([...store.filesWithFingerprintPrefix([key('ffffffff')])], [], 'gone with its record')
})

t.test('pair bases: get reads one path\'s base with one peer, as load reads them all', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params })
  t.teardown(() => store.close())
  const pairs = store.pairBases()
  const file = { kind: 'file' as const, size: 5, mtimeMs: 1700000000123.25, mode: 0o644, digest: digestBytes(Uint8Array.of(1)) }
  const link = { kind: 'symlink' as const, size: 3, mtimeMs: 1, mode: 0o777, target: 'a/b' }
  await pairs.update('peer1', new Map<string, PairBase>([['dir/f.txt', file], ['l', link]]))
  await pairs.update('peer2', new Map<string, PairBase>([['dir/f.txt', { ...file, size: 6 }]]))
  t.same(pairs.get('peer1', 'dir/f.txt'), file)
  t.same(pairs.get('peer1', 'l'), link)
  t.same(pairs.get('peer2', 'dir/f.txt'), { ...file, size: 6 }, 'each peer its own')
  t.equal(pairs.get('peer1', 'dir'), undefined, 'no base, no entry')
  t.same([...pairs.load('peer1')].sort(), [['dir/f.txt', file], ['l', link]])
  await pairs.update('peer1', new Map<string, PairBase | null>([['dir/f.txt', null]]))
  t.equal(pairs.get('peer1', 'dir/f.txt'), undefined, 'removed')
  t.same(pairs.get('peer2', 'dir/f.txt'), { ...file, size: 6 }, 'the other peer\'s untouched')
})
