import t from 'tap'
import fc from 'fast-check'
import { BLOCK_HASH_SEED, blockHash, murmur3 } from '../../src/delta/block-hash.js'
import { blockHasher, hashKernelAvailable, keyBlocks, type HashKernelKind } from '../../src/delta/hash-kernel.js'
import { Matcher, type OpSink } from '../../src/delta/matcher.js'
import { rollingHash } from '../../src/delta/rolling-hash.js'
import { computeSignature } from '../../src/delta/signature.js'
import { randomBytes, splitStream } from '../support/random.js'
import { applyEdit, editArb } from './support/edits.js'

const KINDS: readonly HashKernelKind[] = ['wasm', 'js']

/** Random bytes, or text-like bytes from a few values (repeats make equal windows). */
const bytesArb = fc.oneof(
  fc.uint8Array({ minLength: 0, maxLength: 3000 }),
  fc.array(fc.constantFrom(0, 10, 32, 97, 101, 255), { minLength: 0, maxLength: 3000 }).map((a) => Uint8Array.from(a)),
)

t.test('Node has the WebAssembly hash kernel (so the wasm cases below test it, not the fallback)', async (t) => {
  t.equal(hashKernelAvailable(), true)
})

t.test('rolling, strong and keys equal rollingHash and blockHash at every offset and length', async (t) => {
  for (const kind of KINDS) {
    fc.assert(
      fc.property(bytesArb, fc.nat(), fc.nat(), (data, a, b) => {
        const h = blockHasher(Math.max(1, data.length), undefined, kind)
        h.bytes.set(data)
        const at = data.length === 0 ? 0 : a % data.length
        const len = data.length === 0 ? 0 : b % (data.length - at + 1)
        const rolling = rollingHash(data, at, len)
        const strong = blockHash(data, at, len)
        if (h.rolling(at, len) !== rolling || h.strong(at, len) !== strong) return false
        // Both in one pass.
        return h.keys(at, len) === rolling && h.lastStrong === strong
      }),
      { numRuns: 500 },
    )
  }
  // The published MurmurHash3 vectors, through the kernel (seeded as the block keys are).
  const h = blockHasher(64, undefined, 'wasm')
  const text = new TextEncoder().encode('The quick brown fox jumps over the lazy dog')
  h.bytes.set(text, 3)
  t.equal(h.strong(3, 43), murmur3(text, 0, 43, BLOCK_HASH_SEED))
  t.equal(h.strong(3, 0), murmur3(text, 0, 0, BLOCK_HASH_SEED))
})

t.test('search stops where the roll first meets a filter bit, or at last, with the hash there', async () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 80, maxLength: 2000 }),
      fc.integer({ min: 1, max: 64 }),
      fc.integer({ min: 4, max: 10 }).chain((bits) => fc.uint8Array({ minLength: (1 << bits) / 8, maxLength: (1 << bits) / 8 })),
      fc.nat(),
      fc.nat(),
      (data, b, filter, s, l) => {
        // Sparse filters too: clear most bits so that long rolls happen.
        if (s % 2 === 0) for (let i = 0; i < filter.length; i++) if (i % 5 !== 0) filter[i] = 0
        const filterShift = 32 - Math.log2(filter.length * 8)
        const start = s % (data.length - b)
        const last = start + (l % (data.length - b - start))
        // The reference: the plain rolling hash at each offset.
        let want = start
        while (want < last) {
          const f = rollingHash(data, want, b) >>> filterShift
          if ((filter[f >>> 3]! & (1 << (f & 7))) !== 0) break
          want++
        }
        for (const kind of KINDS) {
          const h = blockHasher(data.length, { blockSize: b, filter, filterShift }, kind)
          h.bytes.set(data)
          const q = h.search(start, last, rollingHash(data, start, b))
          if (q !== want || h.hash !== rollingHash(data, q, b)) return false
          if (q < data.length - b && h.roll(q, h.hash) !== rollingHash(data, q + 1, b)) return false
        }
        return true
      },
    ),
    { numRuns: 300 },
  )
})

t.test('a released kernel serves the next hasher with that one\'s own window and tables; the released one throws', async (t) => {
  // Hashers made and released in turn, each with other tables and sizes, as matchers per small
  // file or per hole are: a table left from an instance's last hasher would show here.
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          data: fc.uint8Array({ minLength: 80, maxLength: 3000 }),
          b: fc.integer({ min: 1, max: 64 }),
          bits: fc.integer({ min: 4, max: 12 }),
          fill: fc.integer({ min: 0, max: 255 }),
        }),
        { minLength: 2, maxLength: 8 },
      ),
      (runs) => {
        for (const { data, b, bits, fill } of runs) {
          const filter = new Uint8Array((1 << bits) / 8).fill(fill)
          const filterShift = 32 - bits
          const h = blockHasher(data.length, { blockSize: b, filter, filterShift }, 'wasm')
          const j = blockHasher(data.length, { blockSize: b, filter, filterShift }, 'js')
          h.bytes.set(data)
          j.bytes.set(data)
          const start = data.length % 7
          const last = data.length - b
          const q = h.search(start, last, rollingHash(data, start, b))
          if (q !== j.search(start, last, rollingHash(data, start, b)) || h.hash !== j.hash) return false
          if (h.keys(1, b) !== rollingHash(data, 1, b) || h.lastStrong !== blockHash(data, 1, b)) return false
          if (q < last && h.roll(q, h.hash) !== j.roll(q, j.hash)) return false
          h.release()
          j.release()
        }
        return true
      },
    ),
    { numRuns: 200 },
  )
  const h = blockHasher(1000, undefined, 'wasm')
  h.release()
  t.throws(() => h.rolling(0, 10), /after its release/, 'a released hasher is not used by mistake')
  t.throws(() => h.hash, /after its release/, 'nor its last hash')
  t.throws(() => h.lastStrong, /after its release/, 'nor its last strong key')
  t.throws(() => h.roll(0, 0), /after its release/, 'nor its roll')
  t.equal(h.bytes.length, 0, 'and its window is gone')
  h.release() // twice: nothing more happens
  const next = blockHasher(1000, undefined, 'wasm')
  next.bytes.set(randomBytes(9, 1000))
  t.equal(next.rolling(0, 1000), rollingHash(next.bytes, 0, 1000), 'the next one works')
})

t.test('grow keeps the window\'s bytes and their keys', async (t) => {
  for (const kind of KINDS) {
    const data = randomBytes(5, 70_000)
    const h = blockHasher(70_000, undefined, kind)
    h.bytes.set(data)
    const before = h.strong(17, 60_000)
    h.grow(5_000_000)
    t.ok(h.bytes.length >= 5_000_000, `${kind}: grown`)
    t.equal(h.strong(17, 60_000), before, `${kind}: same bytes after grow`)
    t.equal(h.rolling(1, 69_999), rollingHash(data, 1, 69_999))
  }
})

t.test('keyBlocks keys every block in order, through windows smaller and larger than a block', async (t) => {
  const cases: Array<[number, number]> = [
    [0, 256],
    [1000, 256],
    [3_000_001, 4096],
    [2_621_440 + 5, 1 << 20], // blocks as large as the shared window, and a short last one
    [1_500_000, 700_000],
  ]
  for (const [n, b] of cases) {
    const data = randomBytes(n + b, n)
    const want: Array<[number, number]> = []
    for (let at = 0; at < n; at += b) want.push([rollingHash(data, at, Math.min(b, n - at)), blockHash(data, at, Math.min(b, n - at))])
    for (const kind of [undefined, ...KINDS]) {
      const got: Array<[number, number]> = []
      keyBlocks(data, b, (r, s) => got.push([r, s]), kind)
      t.same(got, want, `${n} bytes in ${b}-byte blocks (${kind ?? 'shared'})`)
    }
  }
})

/** What a matcher decided, as a list. */
class Ops implements OpSink {
  readonly ops: Array<[string, number, number]> = []
  copy(offset: number, length: number): void {
    this.ops.push(['copy', offset, length])
  }
  literal(bytes: Uint8Array): void {
    this.ops.push(['literal', bytes.length, blockHash(bytes, 0, bytes.length)])
  }
}

/** The matcher's choices: either implementation throughout, or its default (the kernel, its
 *  instances reused from the matchers before: hash-wasm.ts `idle`). */
const MATCHER_KINDS: readonly (HashKernelKind | undefined)[] = [...KINDS, undefined]

t.test('the matcher decides the same with the kernel, new or reused, and with the JS loops', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 1 << 30 }),
      fc.integer({ min: 0, max: 300_000 }),
      fc.array(editArb, { maxLength: 6 }),
      fc.constantFrom(64, 256, 1000, 4096),
      fc.array(fc.integer({ min: 1, max: 200_000 }), { minLength: 1, maxLength: 3 }),
      async (s, n, edits, blockSize, split) => {
        const seed = randomBytes(s, n)
        const target = edits.reduce(applyEdit, seed)
        const sig = await computeSignature(splitStream(seed, [70_000]), { blockSize })
        const results: string[] = []
        for (const kind of MATCHER_KINDS) {
          const ops = new Ops()
          const m = new Matcher(sig, ops, 64 * 1024, kind)
          for await (const piece of splitStream(target, split)) m.push(piece)
          m.end()
          results.push(JSON.stringify(ops.ops))
        }
        return results.every((r) => r === results[0])
      },
    ),
    { numRuns: 40 },
  )
})

t.test('the same past the 4 MiB window (compaction), and a delta of 12 MiB rebuilt the same', async (t) => {
  const seed = randomBytes(77, 12 << 20)
  const target = [
    { kind: 'overwrite', at: 0.1, to: 0, len: 64, seed: 1 },
    { kind: 'insert', at: 0.4, to: 0, len: 3000, seed: 2 },
    { kind: 'move', at: 0.7, to: 0.2, len: 5000, seed: 3 },
  ].reduce(applyEdit as (b: Uint8Array, e: unknown) => Uint8Array, seed)
  const sig = await computeSignature(splitStream(seed, [1 << 20]), { blockSize: 4096 })
  const results: string[] = []
  for (const kind of MATCHER_KINDS) {
    const ops = new Ops()
    const m = new Matcher(sig, ops, 64 * 1024, kind)
    for await (const piece of splitStream(target, [1 << 20])) m.push(piece)
    m.end()
    results.push(JSON.stringify(ops.ops))
    const copied = ops.ops.filter((o) => o[0] === 'copy').reduce((a, o) => a + o[2], 0)
    t.ok(copied > target.length - 40_000, `${kind ?? 'default'}: all but the edits copied (${copied} of ${target.length})`)
  }
  t.equal(results[1], results[0])
  t.equal(results[2], results[0])
})
