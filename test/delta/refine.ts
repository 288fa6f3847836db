import t from 'tap'
import fc from 'fast-check'
import { computeRefineSignature, computeSignature, encodeMatchedDelta, matchTarget, planRefinement, refineMatches } from '../../src/delta/index.js'
import { collect, randomBytes, splitStream } from '../support/random.js'
import { applyEdit, editArb } from './support/edits.js'
import { refinedExchange } from './support/refined.js'
import { concat, equalBytes, makeDelta, memorySeed, patchBytes } from './support/roundtrip.js'

t.test('a refined exchange rebuilds the target exactly, for random edits and round-1 block sizes', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 1 << 30 }),
      fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 60000 })),
      fc.array(editArb, { maxLength: 6 }),
      fc.constantFrom(64, 256, 1000, 4096),
      async (s, n, edits, blockSize) => {
        const seed = randomBytes(s, n)
        const target = edits.reduce(applyEdit, seed)
        const x = await refinedExchange(seed, target, { blockSize })
        t.ok(equalBytes(x.rebuilt, target), 'rebuilt target equals the target')
      },
    ),
    { numRuns: 100 },
  )
})

t.test('low-entropy seeds (zeros, short periods) round-trip through refinement', async (t) => {
  const period = new Uint8Array(50000).map((_, i) => i % 7)
  for (const seed of [period, new Uint8Array(50000)]) {
    const target = concat([seed.subarray(0, 12345), randomBytes(5, 10), seed.subarray(12000), new Uint8Array(500)])
    t.ok(equalBytes((await refinedExchange(seed, target, { blockSize: 2048 })).rebuilt, target))
  }
})

t.test('refinement makes a small edit cost about its own size, not a block', async (t) => {
  const seed = randomBytes(21, 20 << 20)
  const target = concat([seed.subarray(0, 5_000_123), randomBytes(22, 100), seed.subarray(5_000_123 + 40)])
  const one = await makeDelta(seed, target)
  const x = await refinedExchange(seed, target, { regions: 1 })
  t.ok(equalBytes(x.rebuilt, target))
  t.ok(x.literalBytes <= 100 + 64, `literal ${x.literalBytes} B (one round: ${one.stats.literalBytes})`)
  t.ok(x.total < (one.sigBytes.length + one.delta.length) / 4, `refined ${x.total} B on the wire, one round ${one.sigBytes.length + one.delta.length}`)
})

t.test('without refinement rounds the matched delta equals what encodeDelta finds', async (t) => {
  const seed = randomBytes(31, 300_000)
  const target = concat([seed.subarray(0, 100_000), randomBytes(32, 3000), seed.subarray(100_500)])
  const sig = await computeSignature(splitStream(seed, [65536]), { blockSize: 1024 })
  const { list, digest } = await matchTarget(sig, splitStream(target, [7777]))
  const d = encodeMatchedDelta(list, memorySeed(target), digest)
  const delta = concat(await collect(d.bytes))
  t.ok(equalBytes(await patchBytes(seed, delta), target))
  const plain = await makeDelta(seed, target, { blockSize: 1024 })
  t.equal(d.stats().literalBytes, plain.stats.literalBytes)
})

t.test('a target changed between round 1 and the final delta fails the digest check, never silently', async (t) => {
  const seed = randomBytes(41, 100_000)
  const target = seed.slice()
  target[5000] ^= 1
  const sig = await computeSignature(splitStream(seed, [65536]), { blockSize: 1024 })
  const { list, digest } = await matchTarget(sig, splitStream(target, [65536]))
  const changed = target.slice()
  changed[5001] ^= 1 // inside the hole the final delta reads again
  const delta = concat(await collect(encodeMatchedDelta(list, memorySeed(changed), digest).bytes))
  await t.rejects(patchBytes(seed, delta), { code: 'DIGEST_MISMATCH' })
})

t.test('with fastCheck the matched delta ends with the XXH3-128 (format version 2): it rebuilds, and a target changed before the final delta fails that check', async (t) => {
  const seed = randomBytes(42, 100_000)
  const target = seed.slice()
  target[5000] ^= 1
  const sig = await computeSignature(splitStream(seed, [65536]), { blockSize: 1024 })
  const { list, digest } = await matchTarget(sig, splitStream(target, [65536]), { fastCheck: true })
  t.ok(digest instanceof Uint8Array && digest.length === 16, 'a 16-byte check, not a SHA-256')
  const delta = concat(await collect(encodeMatchedDelta(list, memorySeed(target), digest).bytes))
  t.equal(delta[3], 2, 'format version 2')
  t.ok(equalBytes(await patchBytes(seed, delta), target), 'rebuilt')
  const changed = target.slice()
  changed[5001] ^= 1
  const bad = concat(await collect(encodeMatchedDelta(list, memorySeed(changed), digest).bytes))
  await t.rejects(patchBytes(seed, bad), { code: 'DIGEST_MISMATCH' })
})

t.test('matchTarget given the digest the caller has: the same list, that digest carried (not computed)', async (t) => {
  const seed = randomBytes(44, 100_000)
  const target = seed.slice()
  target[70_000] ^= 1
  const sig = await computeSignature(splitStream(seed, [65536]), { blockSize: 1024 })
  const hashed = await matchTarget(sig, splitStream(target, [65536]))
  const given = 'ab'.repeat(32) as typeof hashed.digest
  const kept = await matchTarget(sig, splitStream(target, [65536]), { digest: given })
  t.same(kept.list, hashed.list)
  t.equal(kept.digest, given, 'the given digest, so a file changed since it was hashed fails the receiver\'s check')
})

t.test('an aborted signal stops matching with ABORTED', async (t) => {
  const ac = new AbortController()
  ac.abort()
  const sig = await computeSignature(splitStream(randomBytes(1, 5000), [5000]), { blockSize: 256 })
  await t.rejects(matchTarget(sig, splitStream(randomBytes(2, 5000), [1000]), { signal: ac.signal }), { code: 'ABORTED' })
})

t.test('a forced false match in a refinement round ends in DIGEST_MISMATCH, never in a wrong file', async (t) => {
  const seed = randomBytes(51, 200_000)
  const target = concat([seed.subarray(0, 50_000), randomBytes(52, 8000), seed.subarray(58_000)])
  const sig = await computeSignature(splitStream(seed, [65536]), { blockSize: 4096 })
  const { list, digest } = await matchTarget(sig, splitStream(target, [65536]))
  const plan = planRefinement(list, 4096)!
  t.ok(plan, 'the overwritten range is refined')
  // 1 + 1 bits per block: windows of the new bytes "match" some block of the old range.
  const weak = await computeRefineSignature(memorySeed(seed), list, { ...plan, weakBits: 1, strongBits: 1 })
  const refined = await refineMatches(list, weak, memorySeed(target))
  const copied = (l: typeof list): number => l.matches.reduce((n, m) => n + m.length, 0)
  t.ok(copied(refined) > copied(list), `${copied(refined) - copied(list)} bytes falsely matched`)
  const delta = concat(await collect(encodeMatchedDelta(refined, memorySeed(target), digest).bytes))
  await t.rejects(patchBytes(seed, delta), { code: 'DIGEST_MISMATCH' })
})
