import t from 'tap'
import { MAX_POSTINGS, Store } from '../../src/store/index.js'
import { rankCandidates } from '../../src/store/candidates.js'
import { type Chunk, type Fingerprint, fingerprint } from '../../src/index.js'
import { randomBytes } from '../support/random.js'
import { TEST_PARAMS, recordOf } from '../support/records.js'
import { tempTree } from '../support/temp.js'

/** Source with 3 of its tenths overwritten: 70% of its bytes kept, in place. */
function editTenths(src: Uint8Array, tenths: readonly number[], seed: number): Uint8Array {
  const out = Uint8Array.from(src)
  const part = Math.floor(src.length / 10)
  for (const i of tenths) out.set(randomBytes(seed + i, part), i * part)
  return out
}

t.test('an edited and renamed file (70% shared) is the top candidate among 200 unrelated files', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params: TEST_PARAMS })
  t.teardown(() => store.close())
  const puts: Promise<void>[] = []
  for (let i = 0; i < 200; i++) puts.push(store.put(recordOf(`misc/${i}.dat`, randomBytes(1000 + i, 4000 + 97 * i))))
  const original = randomBytes(7, 24_000)
  // A file sharing 30% with the target: it must rank below the 70% source.
  const partial = new Uint8Array([...randomBytes(8, 17_000), ...original.subarray(0, 7_200)])
  puts.push(store.put(recordOf('old/name.txt', original)), store.put(recordOf('other/partial.txt', partial)))
  await Promise.all(puts)

  const target = recordOf('new/place.txt', editTenths(original, [2, 5, 8], 50))
  const found = store.candidates(target.chunks)
  t.equal(found[0]?.path, 'old/name.txt')
  t.ok(found[0]!.score > 0.4 && found[0]!.score <= 1, `score ${found[0]!.score}`)
  t.ok(found.length <= 8)
  t.notOk(found.some((c) => c.path.startsWith('misc/')), 'unrelated files share nothing')
  t.same(store.candidates(target.chunks, { exclude: ['old/name.txt'] })[0]?.path, 'other/partial.txt')
  t.same(store.candidates(target.chunks, { limit: 1 }).length, 1)
  t.same(store.candidates([]), [])
})

const fp = (s: string) => fingerprint(new TextEncoder().encode(s))
const chunk = (f: Fingerprint, length: number, offset = 0): Chunk => ({ offset, length, fp: f })

t.test('ranking: by bytes of the target supplied, ties by path', async (t) => {
  // Fingerprints made to pass the sample rule are not needed: with ≤ MIN_HASHES distinct
  // fingerprints every one of them is sampled.
  const [a, b, c] = [fp('a'), fp('b'), fp('c')]
  const target = [chunk(a, 100), chunk(b, 300, 100), chunk(c, 600, 400)]
  const postings = new Map<Fingerprint, number[]>([
    [a, [1, 2, 3]],
    [b, [2, 3]],
    [c, []],
  ])
  const paths = new Map([
    [1, 'z'],
    [2, 'y'],
    [3, 'x'],
  ])
  const got = rankCandidates(target, { idsWithFingerprint: (f) => postings.get(f) ?? [], pathOf: (id) => paths.get(id) })
  t.same(got, [
    { path: 'x', score: 0.4 },
    { path: 'y', score: 0.4 },
    { path: 'z', score: 0.1 },
  ])
  const repeated = [chunk(a, 100), chunk(a, 100, 100), chunk(b, 200, 200)]
  const r2 = rankCandidates(repeated, { idsWithFingerprint: (f) => (f === a ? [1] : []), pathOf: (id) => paths.get(id) })
  t.same(r2, [{ path: 'z', score: 0.5 }], 'every occurrence of a chunk in the target counts')
})

t.test('a fingerprint held by more than MAX_POSTINGS files is not looked up', async (t) => {
  const root = await tempTree(t)
  const store = await Store.open(root, { params: TEST_PARAMS })
  t.teardown(() => store.close())
  const common = chunk(fp('zeros'), 256)
  const rare = chunk(fp('rare'), 256, 256)
  const base = recordOf('x', new Uint8Array(1))
  const puts: Promise<void>[] = []
  for (let i = 0; i <= MAX_POSTINGS; i++) puts.push(store.put({ ...base, path: `f${i}`, chunks: [common] }))
  puts.push(store.put({ ...base, path: 'holder', chunks: [common, rare] }))
  await Promise.all(puts)
  t.same(store.candidates([common]), [], 'too common: no candidates rather than a thousand')
  t.same(store.candidates([common, rare]), [{ path: 'holder', score: 0.5 }])
})
