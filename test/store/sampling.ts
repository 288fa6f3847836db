import t from 'tap'
import { chunkBytes, chunkParams, cutterFor } from '../../src/index.js'
import { MIN_HASHES, SAMPLE_MODULUS, sampleFingerprints } from '../../src/store/index.js'
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
