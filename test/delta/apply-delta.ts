import t from 'tap'
import fc from 'fast-check'
import { applyDelta, computeSignature, EMPTY_SIGNATURE, encodeDelta, identityDigest } from '../../src/delta/index.js'
import { digestBytes, newStreamChecker } from '../../src/hash/index.js'
import { DsyncError } from '../../src/errors.js'
import { collect, randomBytes, splitStream } from '../support/random.js'
import { concat, equalBytes, makeDelta, memorySeed, patchBytes } from './support/roundtrip.js'

const seed = randomBytes(21, 60000)
const text = new TextEncoder().encode('the quick brown fox jumps over the lazy dog\n'.repeat(500))
const target = concat([seed.subarray(0, 20000), text, seed.subarray(25000), randomBytes(22, 3000)])

/** The outcome of applying `delta`: the target, or the code of the DsyncError it threw. */
async function outcome(delta: Uint8Array, s: Uint8Array | null = seed): Promise<string> {
  try {
    const out = await patchBytes(s, delta, [4096])
    return equalBytes(out, target) ? 'target' : 'WRONG OUTPUT'
  } catch (err) {
    if (err instanceof DsyncError) return err.code
    throw err
  }
}

/** The outcome of each single-bit flip of `delta`, by the flipped byte's index: the code of the
 *  DsyncError `rebuild` threw, 'same target' or 'WRONG OUTPUT'. */
async function everyFlip(delta: Uint8Array, rebuild: (bad: Uint8Array) => Promise<Uint8Array>, expected: Uint8Array): Promise<{ at: number; code: string }[]> {
  const out: { at: number; code: string }[] = []
  for (let i = 0; i < delta.length; i++) {
    for (let bit = 0; bit < 8; bit++) {
      const bad = delta.slice()
      bad[i]! ^= 1 << bit
      let code: string
      try {
        code = equalBytes(await rebuild(bad), expected) ? 'same target' : 'WRONG OUTPUT'
      } catch (err) {
        code = err instanceof DsyncError ? err.code : `${err}`
      }
      out.push({ at: i, code })
    }
  }
  return out
}

/** How many times each code occurs. */
function tally(outcomes: readonly { code: string }[]): Map<string, number> {
  const codes = new Map<string, number>()
  for (const { code } of outcomes) codes.set(code, (codes.get(code) ?? 0) + 1)
  return codes
}

t.test('corruption: flipped, cut or extended deltas give BAD_DATA or DIGEST_MISMATCH, never a wrong target', async (t) => {
  const { delta } = await makeDelta(seed, target, { blockSize: 512 })
  t.equal(await outcome(delta), 'target', 'the intact delta applies')
  const seen = new Set<string>()
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.record({ kind: fc.constant('flip' as const), at: fc.nat(delta.length - 1), bit: fc.integer({ min: 0, max: 7 }) }),
        fc.record({ kind: fc.constant('cut' as const), at: fc.nat(delta.length - 1), bit: fc.constant(0) }),
        fc.record({ kind: fc.constant('extend' as const), at: fc.integer({ min: 1, max: 50 }), bit: fc.nat(255) }),
      ),
      async (c) => {
        let bad: Uint8Array
        if (c.kind === 'flip') {
          bad = delta.slice()
          bad[c.at]! ^= 1 << c.bit
        } else if (c.kind === 'cut') {
          bad = delta.slice(0, c.at)
        } else {
          bad = concat([delta, new Uint8Array(c.at).fill(c.bit)])
        }
        const o = await outcome(bad)
        seen.add(o)
        // A flip inside a stored literal's bytes or the digest is caught by the digest; a flip
        // in a COPY offset may still copy equal bytes (then the output is the true target).
        t.ok(o === 'BAD_DATA' || o === 'DIGEST_MISMATCH' || o === 'target', `${c.kind}@${c.at}: ${o}`)
      },
    ),
    { numRuns: 300 },
  )
  t.ok(seen.has('BAD_DATA') && seen.has('DIGEST_MISMATCH'), `both codes occur: ${[...seen].join(', ')}`)
})

t.test('every single-bit flip of a small delta is caught', async (t) => {
  const s = randomBytes(23, 3000)
  const tg = concat([s.subarray(0, 1000), randomBytes(24, 50), s.subarray(1200)])
  const { delta } = await makeDelta(s, tg, { blockSize: 100 })
  const codes = tally(await everyFlip(delta, (bad) => patchBytes(s, bad), tg))
  t.notOk(codes.has('WRONG OUTPUT'), [...codes].join(', '))
  t.ok([...codes.keys()].every((c) => c === 'BAD_DATA' || c === 'DIGEST_MISMATCH' || c === 'same target'), [...codes].join(', '))
})

t.test('wrong seed: another size is BAD_DATA before any byte is written, same size is DIGEST_MISMATCH', async (t) => {
  const { delta } = await makeDelta(seed, target, { blockSize: 512 })
  const writes: number[] = []
  const other = randomBytes(99, seed.length + 1)
  await t.rejects(applyDelta(memorySeed(other), splitStream(delta, [100]), { write: async (b) => void writes.push(b.length) }), {
    code: 'BAD_DATA',
    message: /wrong seed/,
  })
  t.same(writes, [], 'nothing written')
  t.equal(await outcome(delta, randomBytes(98, seed.length)), 'DIGEST_MISMATCH')
  t.equal(await outcome(delta, null), 'BAD_DATA', 'a delta that copies needs a seed')
})

t.test('trailing bytes, garbage and other versions are BAD_DATA with a clear message', async (t) => {
  const d = encodeDelta(EMPTY_SIGNATURE, splitStream(target, [5000]))
  const delta = concat(await collect(d.bytes))
  t.equal(await outcome(delta, null), 'target')
  const sink = { write: async () => undefined }
  await t.rejects(applyDelta(null, splitStream(concat([delta, new Uint8Array([0])]), [7]), sink), { code: 'BAD_DATA', message: /after its end/ })
  await t.rejects(applyDelta(null, splitStream(new TextEncoder().encode('hello world'), [3]), sink), { code: 'BAD_DATA', message: /not a dsync delta/ })
  const v3 = delta.slice()
  v3[3] = 3
  await t.rejects(applyDelta(null, splitStream(v3, [100]), sink), { code: 'BAD_DATA', message: /version 3 is not supported/ })
  const v2 = delta.slice()
  v2[3] = 2 // a version-1 delta called version 2: its 32-byte SHA-256 is not a 16-byte XXH3-128
  await t.rejects(applyDelta(null, splitStream(v2, [100]), sink), { code: 'BAD_DATA', message: /after its end/ })
  await t.rejects(applyDelta(null, splitStream(new Uint8Array(0), [1]), sink), { code: 'BAD_DATA', message: /truncated/ })
})

t.test('a hostile frame size is refused before allocating', async (t) => {
  // header, seed size 0, FRAME codec 0, raw = 2^40, stored = 1
  const hostile = new Uint8Array([0x64, 0x73, 0x44, 1, 0, 3, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 1, 0])
  await t.rejects(applyDelta(null, splitStream(hostile, [4]), { write: async () => undefined }), { code: 'BAD_DATA', message: /limits/ })
})

t.test('sink writes arrive in order whatever the op sizes (small ops are gathered)', async (t) => {
  const s = randomBytes(31, 3 << 20)
  const tg = concat([s.subarray(0, 700000), randomBytes(32, 5), s.subarray(700000, 2500000), randomBytes(33, 1 << 20)])
  const { delta } = await makeDelta(s, tg)
  const sizes: number[] = []
  const parts: Uint8Array[] = []
  await applyDelta(memorySeed(s), splitStream(delta, [1000]), { write: async (b) => void (sizes.push(b.length), parts.push(b.slice())) })
  t.ok(equalBytes(concat(parts), tg))
  t.ok(Math.max(...sizes) <= 1 << 20, 'writes of at most 1 MiB')
})

t.test('format version 2: the target checked with XXH3-128; every bit flipped is caught; no digest returned; refused where a SHA-256 is expected', async (t) => {
  const small = concat([text.subarray(0, 1500), randomBytes(25, 200)])
  const fast = concat(await collect(encodeDelta(EMPTY_SIGNATURE, splitStream(small, [300]), { fastCheck: true }).bytes))
  const slow = concat(await collect(encodeDelta(EMPTY_SIGNATURE, [small]).bytes))
  t.equal(fast[3], 2, 'header: version 2')
  t.equal(slow[3], 1, 'without fastCheck: version 1')
  t.equal(slow.length - fast.length, 16, 'the trailer is 16 bytes shorter')
  const sink = (out: Uint8Array[]) => ({ write: async (b: Uint8Array) => void out.push(b.slice()) })
  const out: Uint8Array[] = []
  const got = await applyDelta(null, splitStream(fast, [64]), sink(out))
  t.ok(equalBytes(concat(out), small), 'rebuilt')
  t.same({ size: got.size, digest: got.digest }, { size: small.length, digest: undefined }, 'its size, and no SHA-256')
  const flips = await everyFlip(fast, async (bad) => {
    const o: Uint8Array[] = []
    await applyDelta(null, splitStream(bad, [bad.length]), sink(o))
    return concat(o)
  }, small)
  const codes = tally(flips.filter((f) => f.at < fast.length - 16))
  const inCheck = tally(flips.filter((f) => f.at >= fast.length - 16))
  // As for version 1, a flip that still rebuilds the target (a copy offset pointing at equal
  // bytes, say) is no failure; a wrong target never comes out.
  t.ok([...codes.keys()].every((c) => c === 'BAD_DATA' || c === 'DIGEST_MISMATCH' || c === 'same target'), [...codes].join(', '))
  t.ok((codes.get('DIGEST_MISMATCH') ?? 0) > 0, `flips of the compressed literals: DIGEST_MISMATCH (${codes.get('DIGEST_MISMATCH')})`)
  t.same([...inCheck], [['DIGEST_MISMATCH', 128]], 'every flip of the 16-byte check: DIGEST_MISMATCH')
  const slowGot = await applyDelta(null, splitStream(slow, [slow.length]), sink([]))
  await t.rejects(applyDelta(null, splitStream(fast, [fast.length]), sink([]), { expect: { size: small.length, digest: slowGot.digest! } }), { code: 'BAD_DATA', message: /XXH3-128 for a file whose SHA-256 was listed/ })
  const withDigest = concat(await collect(encodeDelta(EMPTY_SIGNATURE, [small], { fastCheck: true, digest: slowGot.digest! }).bytes))
  t.equal(withDigest[3], 1, 'a digest given: version 1 with it, whatever fastCheck says')
})

t.test('a seed read that fails while the piece before is still being written is the patch\'s error, not an unhandled rejection', async (t) => {
  // 3 MiB copied from the seed: pieces of 1 MiB, each read while the one before is written.
  const big = randomBytes(23, 3 * 1024 * 1024)
  const { delta } = await makeDelta(big, big, { blockSize: 64 * 1024 })
  const unhandled: unknown[] = []
  const onUnhandled = (err: unknown): void => void unhandled.push(err)
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => void process.off('unhandledRejection', onUnhandled))
  const shrank = new DsyncError('IO', 'the seed shrank')
  const failing = { size: big.length, read: async (offset: number, length: number) => (offset === 0 ? big.slice(0, length) : Promise.reject(shrank)) }
  // A slow disk: the failed read ahead settles long before the write it runs beside.
  const slowSink = { write: () => new Promise<void>((r) => setTimeout(r, 50)) }
  await t.rejects(applyDelta(failing, splitStream(delta, [65536]), slowSink), shrank, 'the failed read, at its turn')
  await new Promise((r) => setTimeout(r, 20))
  t.same(unhandled, [], 'no unhandled rejection')
})

t.test('identityDigest: the digest of a delta that copies its whole seed in place, and of no other', async (t) => {
  const big = randomBytes(24, 200_000)
  const same = await makeDelta(big, big, { blockSize: 4096 })
  t.equal(identityDigest(same.delta), digestBytes(big), 'a target equal to its seed')
  t.equal(identityDigest(same.delta.subarray(0, same.delta.length - 1)), undefined, 'cut short')
  t.equal(identityDigest(concat([same.delta, new Uint8Array(1)])), undefined, 'a byte more')
  const edited = Buffer.from(big)
  edited[100_000]! ^= 1
  t.equal(identityDigest((await makeDelta(big, edited, { blockSize: 4096 })).delta), undefined, 'one byte changed')
  t.equal(identityDigest((await makeDelta(big, big.subarray(4096), { blockSize: 4096 })).delta), undefined, 'its tail only')
  // Checked with XXH3-128 (format version 2, a direct file's delta): that check.
  const sig = await computeSignature(splitStream(big, [65536]), { size: big.length, blockSize: 4096 })
  const fast = concat(await collect(encodeDelta(sig, splitStream(big, [65536]), { fastCheck: true }).bytes))
  const checker = await newStreamChecker()
  checker.update(big)
  const check = checker.digest()
  t.equal(fast[3], 2, 'a delta of format version 2')
  t.strictSame(identityDigest(fast), check, 'its XXH3-128 (16 bytes)')
  t.equal(identityDigest(fast.subarray(0, fast.length - 1)), undefined, 'version 2, cut short')
  t.equal(identityDigest(concat([fast, new Uint8Array(1)])), undefined, 'version 2, a byte more')
  const given = concat(await collect(encodeDelta(sig, splitStream(big, [65536]), { digest: check }).bytes))
  t.strictSame(identityDigest(given), check, 'an XXH3-128 given as the check: version 2 with it')
  // Safety, whatever the inputs: a digest means the target is the seed, and it is the target's.
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 20_000 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 19_999 }), async (s, edit, at) => {
      const target = Buffer.from(s)
      if (edit === 1) target[at % target.length]! ^= 0xff
      const tgt = edit === 2 ? target.subarray(0, Math.max(1, at % target.length)) : target
      const { delta } = await makeDelta(s, tgt, { blockSize: 256 })
      const d = identityDigest(delta)
      return d === undefined || (equalBytes(tgt, s) && d === digestBytes(tgt))
    }),
    { numRuns: 200 },
  )
})
