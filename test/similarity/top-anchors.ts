import t from 'tap'
import fc from 'fast-check'
import { sketchBytes } from '../../src/similarity/index.js'
import { probeAnchorFinder, probeAnchorKeys } from '../../src/store/index.js'
import { randomBytes } from '../support/random.js'

/** The finder's keys for `data` fed in pieces of `sizes` (cycled), by the given loop; told the
 *  file's size with `size` (then undefined when it asks for the bytes again). */
function found(data: Uint8Array, n: number, sizes: readonly number[], kernel: 'wasm' | 'js'): number[]
function found(data: Uint8Array, n: number, sizes: readonly number[], kernel: 'wasm' | 'js', size: number): number[] | undefined
function found(data: Uint8Array, n: number, sizes: readonly number[], kernel: 'wasm' | 'js', size?: number): number[] | undefined {
  const top = probeAnchorFinder(n, { kernel, ...(size !== undefined && { size }) })
  for (let at = 0, i = 0; at < data.length; i++) {
    const piece = sizes[i % sizes.length]!
    top.update(data.subarray(at, at + piece))
    at += piece
  }
  return top.finish()
}

const bytes = fc.oneof(
  fc.integer({ min: 0, max: 300_000 }).map((n) => randomBytes(n + 1, n)),
  // text-like: five symbols, so windows repeat and keys coincide
  fc.integer({ min: 0, max: 200_000 }).map((n) => Uint8Array.from(randomBytes(n + 2, n), (b) => [32, 101, 116, 97, 10][b % 5]!)),
  // a run of one byte: one key at every position
  fc.integer({ min: 0, max: 100_000 }).map((n) => new Uint8Array(n).fill(7)),
  // a short period: a few keys, many times each
  fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 100_000 })).map(([p, n]) => Uint8Array.from({ length: n }, (_, i) => (i % p) * 37)),
)

t.test('the probe keys found without the sketch are the sketch\'s (probeAnchorKeys), in order: any bytes, any n, any split, both loops', async () => {
  await fc.assert(
    fc.property(bytes, fc.constantFrom(1, 2, 8, 32), fc.array(fc.integer({ min: 1, max: 90_000 }), { minLength: 1, maxLength: 5 }), fc.constantFrom('wasm' as const, 'js' as const), (data, n, sizes, kernel) => {
      const want = probeAnchorKeys(sketchBytes(data), n)
      const got = found(data, n, sizes, kernel)
      // A sketch that kept fewer than n keys (a period of a few bytes: its level rose past all
      // but those) gives the highest ones; the finder gives them first, then the next highest.
      const prefix = JSON.stringify(got.slice(0, want.length)) === JSON.stringify(want)
      return prefix && (want.length < n || got.length === n) && new Set(got).size === got.length
    }),
    { numRuns: 150 },
  )
})

t.test('random and text-like files: exactly the sketch\'s keys (their sketches keep far more than n)', async () => {
  await fc.assert(
    fc.property(fc.integer({ min: 4_096, max: 300_000 }), fc.integer({ min: 0, max: 1000 }), fc.boolean(), fc.constantFrom(8, 32), (size, seed, text, n) => {
      const raw = randomBytes(seed, size)
      const data = text ? Uint8Array.from(raw, (b) => [32, 101, 116, 97, 10, 111, 110, 115][b % 8]!) : raw
      const want = probeAnchorKeys(sketchBytes(data), n)
      return want.length === n && JSON.stringify(found(data, n, [size], 'wasm')) === JSON.stringify(want)
    }),
    { numRuns: 40 },
  )
})

t.test('3 MiB of random bytes (the kernel over several of its windows) and a text of 1 MiB: the same keys, 8 and 64 of them', async (t) => {
  const random = randomBytes(5, 3 * 1024 * 1024)
  const text = Uint8Array.from(randomBytes(6, 1024 * 1024), (b) => 97 + (b % 26))
  for (const [name, data] of [['random', random], ['text', text]] as const) {
    for (const n of [8, 64]) {
      const want = probeAnchorKeys(sketchBytes(data), n)
      t.equal(want.length, n, `${name}: the sketch has ${n} keys to give`)
      t.same(found(data, n, [data.length], 'wasm'), want, `${name}, ${n} keys, one piece`)
      t.same(found(data, n, [65_536, 1_000_003], 'wasm'), want, `${name}, ${n} keys, in pieces`)
    }
  }
})

t.test('fewer keys than asked when the file has fewer: none below 64 bytes, one for a run', async (t) => {
  t.same(found(new Uint8Array(63).fill(1), 8, [63], 'wasm'), [])
  const run = found(new Uint8Array(100_000).fill(0), 8, [100_000], 'wasm')
  t.same(run, probeAnchorKeys(sketchBytes(new Uint8Array(100_000)), 8))
  t.ok(run.length < 8, `a run of zeros has ${run.length} distinct keys`)
})

t.test('told the file\'s size, the finder gives the same keys, or asks for the bytes again where too few keys stand at its start', async () => {
  await fc.assert(
    fc.property(bytes, fc.constantFrom(1, 2, 8, 32, 64), fc.array(fc.integer({ min: 1, max: 90_000 }), { minLength: 1, maxLength: 5 }), fc.constantFrom('wasm' as const, 'js' as const), (data, n, sizes, kernel) => {
      const want = found(data, n, sizes, kernel)
      const got = found(data, n, sizes, kernel, data.length)
      // Asked again only for a file long enough to start above level 0.
      return got === undefined ? data.length >= 64 : JSON.stringify(got) === JSON.stringify(want)
    }),
    { numRuns: 200 },
  )
})

t.test('random and text-like files told their size: the same keys, at the first reading', async () => {
  await fc.assert(
    fc.property(fc.integer({ min: 1_000, max: 300_000 }), fc.integer({ min: 0, max: 1000 }), fc.boolean(), fc.constantFrom(8, 32, 64), (size, seed, text, n) => {
      const raw = randomBytes(seed, size)
      const data = text ? Uint8Array.from(raw, (b) => [32, 101, 116, 97, 10, 111, 110, 115][b % 8]!) : raw
      const got = found(data, n, [size], 'wasm', size)
      return got !== undefined && JSON.stringify(got) === JSON.stringify(found(data, n, [size], 'wasm'))
    }),
    { numRuns: 60 },
  )
})

t.test('a run or a short period told its size: asks for the bytes again (too few distinct keys), and a wrong size is caught', async (t) => {
  const run = new Uint8Array(100_000).fill(0)
  t.equal(found(run, 8, [run.length], 'wasm', run.length), undefined, 'a run of zeros: asked again')
  const period = Uint8Array.from({ length: 200_000 }, (_, i) => (i % 3) * 37)
  t.equal(found(period, 8, [period.length], 'wasm', period.length), undefined, 'a period of 3 bytes: asked again')
  // A file that shrank between the listing and this read: told 1 MiB, fed 2 KiB.
  const small = randomBytes(9, 2048)
  const got = found(small, 8, [small.length], 'wasm', 1 << 20)
  t.ok(got === undefined || JSON.stringify(got) === JSON.stringify(found(small, 8, [small.length], 'wasm')), 'never other keys')
})
