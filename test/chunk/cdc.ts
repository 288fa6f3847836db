import t from 'tap'
import fc from 'fast-check'
import { readFileSync, writeFileSync } from 'node:fs'
import { CDC_WASM_AVAILABLE, cdcCutter, type CdcKernelKind } from '../../src/chunk/cdc.js'
import { chunkBytes, chunkFile, chunkParams, type ChunkParams } from '../../src/chunk/index.js'
import { fingerprint } from '../../src/hash/index.js'
import { randomBytes, splitStream } from '../support/random.js'

/**
 * Golden cut points (restic chunker_test.go `chunks1`): every chunk of a seeded 8 MiB input at
 * the default avg (8 KiB) and at 1 KiB. The cut definition is a protocol constant: two dsyncs
 * must cut the same bytes the same way. If this fails after an optimization, the optimization
 * is wrong; an intended change of the chunker regenerates the file with
 * `DSYNC_UPDATE_GOLDEN=1 npx tap dist/test/chunk/cdc.js` in the same commit.
 */
const GOLDEN_URL = new URL('../../../test/fixtures/cdc-golden.json', import.meta.url)
const INPUT_SEED = 23
const INPUT_BYTES = 8 * 1024 * 1024

type GoldenChunk = readonly [offset: number, length: number, fp: string]
interface GoldenCase {
  readonly params: { readonly min: number; readonly avg: number; readonly max: number }
  readonly chunks: readonly GoldenChunk[]
}
interface Golden {
  readonly input: string
  readonly cases: readonly GoldenCase[]
}

const input = randomBytes(INPUT_SEED, INPUT_BYTES)
const caseParams: readonly ChunkParams[] = [chunkParams(), chunkParams({ avg: 1024 })]

function cutAll(params: ChunkParams): GoldenChunk[] {
  return chunkBytes(input, cdcCutter(params)).map((c) => [c.offset, c.length, c.fp] as const)
}

/** One chunk per line, so a changed cut shows as a readable diff. */
function formatGolden(g: Golden): string {
  const cases = g.cases.map((c) => {
    const rows = c.chunks.map((ch) => `      ${JSON.stringify(ch)}`).join(',\n')
    return `    {\n      "params": ${JSON.stringify(c.params)},\n      "chunks": [\n${rows}\n      ]\n    }`
  })
  return `{\n  "input": ${JSON.stringify(g.input)},\n  "cases": [\n${cases.join(',\n')}\n  ]\n}\n`
}

if (process.env['DSYNC_UPDATE_GOLDEN'] === '1') {
  const golden: Golden = {
    input: `randomBytes(${INPUT_SEED}, ${INPUT_BYTES}) from test/support/random.ts`,
    cases: caseParams.map((p) => ({ params: { min: p.min, avg: p.avg, max: p.max }, chunks: cutAll(p) })),
  }
  writeFileSync(GOLDEN_URL, formatGolden(golden))
}

const golden = JSON.parse(readFileSync(GOLDEN_URL, 'utf8')) as Golden

const KERNELS: readonly CdcKernelKind[] = ['wasm', 'js']

/** Every chunk of `input` through `cutMany`, in calls of at most `cap` cuts. */
function cutManyAll(params: ChunkParams, kernel: CdcKernelKind, cap: number): GoldenChunk[] {
  const cutter = cdcCutter(params, { kernel })
  const ends = new Int32Array(cap)
  const out: GoldenChunk[] = []
  let pos = 0
  while (pos < input.length) {
    const count = cutter.cutMany(input, pos, input.length, true, ends)
    for (let j = 0; j < count; j++) {
      out.push([pos, ends[j]! - pos, fingerprint(input.subarray(pos, ends[j]!))])
      pos = ends[j]!
    }
  }
  return out
}

t.test('Node has the WebAssembly kernel (so the wasm cases below test it, not the fallback)', async (t) => {
  t.equal(CDC_WASM_AVAILABLE, true)
})

for (const c of golden.cases) {
  const params = chunkParams(c.params)
  t.test(`cdcCutter.cut reproduces the golden cut points at avg ${params.avg}`, async (t) => {
    t.ok(c.chunks.length > INPUT_BYTES / params.max, `golden file holds ${c.chunks.length} chunks`)
    t.same(cutAll(params), c.chunks)
  })
  for (const kernel of KERNELS) {
    t.test(`cutMany (${kernel}) reproduces the golden cut points at avg ${params.avg}`, async (t) => {
      t.same(cutManyAll(params, kernel, 4096), c.chunks)
      // A small batch cap: the kernel must resume exactly where it stopped.
      t.same(cutManyAll(params, kernel, 7), c.chunks)
    })
    t.test(`chunkFile (${kernel}) over odd buffer splits reproduces the golden chunks at avg ${params.avg}`, async (t) => {
      const file = await chunkFile(splitStream(input, [1, 4093, 65537, 1 << 20, 7]), cdcCutter(params, { kernel }))
      t.same(
        file.chunks.map((ch) => [ch.offset, ch.length, ch.fp]),
        c.chunks,
      )
    })
  }
}

t.test('cutMany agrees with repeated cut() for any sizes, kernel, batch cap and look-ahead', async (t) => {
  await fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 30000 }),
      fc.integer({ min: 1, max: 1 << 30 }),
      fc.constantFrom(64, 100, 256, 1000, 4096),
      fc.integer({ min: 1, max: 50 }),
      fc.boolean(),
      (n, seed, avg, cap, final) => {
        const data = randomBytes(seed, n)
        const params = chunkParams({ avg })
        const cutter = cdcCutter(params)
        const expected: number[] = []
        for (let pos = 0; pos < n && (final || n - pos >= params.max); ) {
          pos += cutter.cut(data, pos, n)
          expected.push(pos)
        }
        for (const kernel of KERNELS) {
          const ends = new Int32Array(cap)
          const got: number[] = []
          let pos = 0
          for (;;) {
            const count = cdcCutter(params, { kernel }).cutMany(data, pos, n, final, ends)
            if (count === 0) break
            got.push(...ends.subarray(0, count))
            pos = ends[count - 1]!
          }
          t.same(got, expected, `${kernel}: n ${n} avg ${avg} cap ${cap} final ${final}`)
        }
      },
    ),
    { numRuns: 150 },
  )
})

t.test('the wasm kernel handles max larger than its 1 MiB window and buffers at any offset', async (t) => {
  const data = randomBytes(5, 6 * 1024 * 1024 + 3)
  const params = chunkParams({ avg: 1024 * 1024, min: 4096, max: 4 * 1024 * 1024 })
  const view = data.subarray(3)
  t.same(cutManyAllOf(view, params, 'wasm'), cutManyAllOf(view, params, 'js'))
  t.ok(cutManyAllOf(view, params, 'wasm').length > 1, 'more than one chunk')
})

function cutManyAllOf(data: Uint8Array, params: ChunkParams, kernel: CdcKernelKind): number[] {
  const cutter = cdcCutter(params, { kernel })
  const ends = new Int32Array(64)
  const out: number[] = []
  let pos = 0
  while (pos < data.length) {
    const count = cutter.cutMany(data, pos, data.length, true, ends)
    out.push(...ends.subarray(0, count))
    pos = ends[count - 1]!
  }
  return out
}
