import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { cdcCutter, chunkBytes, chunkFile, chunkParams, type ChunkParams } from '../../src/chunk/index.js'
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

for (const c of golden.cases) {
  const params = chunkParams(c.params)
  t.test(`cdcCutter reproduces the golden cut points at avg ${params.avg}`, async (t) => {
    t.ok(c.chunks.length > INPUT_BYTES / params.max, `golden file holds ${c.chunks.length} chunks`)
    t.same(cutAll(params), c.chunks)
  })
  t.test(`chunkFile over odd buffer splits reproduces the golden chunks at avg ${params.avg}`, async (t) => {
    const file = await chunkFile(splitStream(input, [1, 4093, 65537, 1 << 20, 7]), cdcCutter(params))
    t.same(
      file.chunks.map((ch) => [ch.offset, ch.length, ch.fp]),
      c.chunks,
    )
  })
}
