import t from 'tap'
import { chunkBytes, chunkParams, cutterFor } from '../../src/index.js'
import { MIN_HASHES, probeFingerprints, SAMPLE_MODULUS, sampleFingerprints } from '../../src/store/index.js'
import { randomBytes } from '../support/random.js'

const cut = cutterFor(chunkParams({ avg: 256 }))

t.test('a file of few chunks is indexed whole (min-hash), so tiny files stay findable', async (t) => {
  const chunks = chunkBytes(randomBytes(1, 600), cut)
  t.ok(chunks.length <= MIN_HASHES)
  t.same(new Set(sampleFingerprints(chunks)), new Set(chunks.map((c) => c.fp)))
})

t.test('a large file indexes about 1/SAMPLE_MODULUS of its chunks', async (t) => {
  const chunks = chunkBytes(randomBytes(2, 1 << 20), cut)
  const n = sampleFingerprints(chunks).length - MIN_HASHES
  const expected = chunks.length / SAMPLE_MODULUS
  t.ok(Math.abs(n - expected) < expected * 0.25, `${n} sampled of ${chunks.length}`)
})

t.test('content-defined: a shared chunk is sampled in both files or in neither', async (t) => {
  const shared = randomBytes(3, 64 * 1024)
  const a = chunkBytes(new Uint8Array([...randomBytes(4, 5000), ...shared]), cut)
  const b = chunkBytes(new Uint8Array([...shared, ...randomBytes(5, 9000)]), cut)
  const sa = new Set(sampleFingerprints(a))
  const sb = new Set(sampleFingerprints(b))
  const inBoth = a.map((c) => c.fp).filter((fp) => b.some((c) => c.fp === fp))
  t.ok(inBoth.length > 50)
  const disagree = inBoth.filter((fp) => sa.has(fp) !== sb.has(fp))
  // Only min-hash picks may differ (each file picks its own MIN_HASHES smallest).
  t.ok(disagree.length <= 2 * MIN_HASHES, `${disagree.length} disagreements`)
  t.ok(inBoth.some((fp) => sa.has(fp) && sb.has(fp)))
})

t.test('deterministic, duplicate-free, a subset of the chunk fingerprints', async (t) => {
  const data = randomBytes(6, 20000)
  const chunks = chunkBytes(new Uint8Array([...data, ...data]), cut)
  const s = sampleFingerprints(chunks)
  t.same(s, sampleFingerprints(chunks))
  t.equal(new Set(s).size, s.length)
  const all = new Set(chunks.map((c) => c.fp))
  t.ok(s.every((fp) => all.has(fp)))
  t.same(sampleFingerprints([]), [])
})

t.test('probe fingerprints: at most `count`, from the list, sampled ones first by their min-hash key, the same whatever the chunk order', async (t) => {
  const chunks = chunkBytes(randomBytes(7, 2 << 20), cut)
  const picked = probeFingerprints(chunks, 8)
  t.equal(picked.length, 8)
  t.equal(new Set(picked).size, 8, 'no key twice')
  const all = new Set(chunks.map((c) => c.fp))
  t.ok(picked.every((fp) => all.has(fp)), 'every key is a chunk of the file')
  const indexed = new Set(sampleFingerprints(chunks))
  t.ok(picked.every((fp) => indexed.has(fp)), 'every key is one the content index keeps for a file holding that chunk')
  const passing = chunks.map((c) => c.fp).filter((fp) => Number.parseInt(fp.slice(0, 2), 16) % SAMPLE_MODULUS === 0)
  const smallest = [...new Set(passing)].sort((a, b) => (a.slice(16) < b.slice(16) ? -1 : 1)).slice(0, 8)
  t.same(picked, smallest, 'the 8 smallest of those passing the modulus rule')
  t.same(probeFingerprints([...chunks].reverse(), 8), picked, 'independent of order')
  // Fewer passing than asked for: the smallest others fill up, to the whole list.
  const few = chunkBytes(randomBytes(8, 30_000), cut)
  t.same(new Set(probeFingerprints(few, few.length)), new Set(few.map((c) => c.fp)))
  t.same(probeFingerprints([], 8), [])
})

t.test('probe keys find a file sharing half its chunks almost always: two of 8 keys or more, over 40 files', async (t) => {
  let missed = 0
  for (let i = 0; i < 40; i++) {
    const half = randomBytes(100 + i, 512 * 1024)
    const seed = chunkBytes(new Uint8Array([...half, ...randomBytes(200 + i, 512 * 1024)]), cut)
    const target = chunkBytes(new Uint8Array([...randomBytes(300 + i, 512 * 1024), ...half]), cut)
    const indexed = new Set(sampleFingerprints(seed))
    if (!probeFingerprints(target, 8).some((fp) => indexed.has(fp))) missed++
  }
  t.ok(missed <= 1, `${missed} of 40 missed (expected 40/256)`)
})
