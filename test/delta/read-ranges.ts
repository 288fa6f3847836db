import t from 'tap'
import fc from 'fast-check'
import { setTimeout as sleep } from 'node:timers/promises'
import type { SeedReader } from '../../src/delta/index.js'
import { readRanges, type ByteRange, type RangePiece } from '../../src/delta/read-ranges.js'
import { randomBytes } from '../support/random.js'
import { concat, equalBytes } from './support/roundtrip.js'

/** A reader over `bytes` whose reads settle after random delays (so out of order), counting
 *  the reads in flight and the most ever in flight at once. */
function slowReader(bytes: Uint8Array, seed: number, fail?: (offset: number) => boolean) {
  let s = seed >>> 0 || 1
  const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) % 4
  const state = { inFlight: 0, most: 0, reads: 0 }
  const reader: SeedReader = {
    size: bytes.length,
    async read(offset, length) {
      state.reads++
      state.inFlight++
      state.most = Math.max(state.most, state.inFlight)
      try {
        await sleep(next())
        if (fail?.(offset)) throw new Error(`read at ${offset} failed`)
        return bytes.slice(offset, offset + length)
      } finally {
        state.inFlight--
      }
    },
  }
  return { reader, state }
}

async function all(pieces: AsyncIterable<RangePiece>): Promise<RangePiece[]> {
  const out: RangePiece[] = []
  for await (const p of pieces) out.push(p)
  return out
}

t.test('gives each range\'s bytes in order, in pieces of at most `piece`, whatever order reads settle in', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 1 << 30 }),
      fc.array(fc.tuple(fc.nat(5000), fc.nat(3000)), { maxLength: 40 }),
      fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
      fc.integer({ min: 1, max: 10000 }),
      async (s, raw, piece, aheadBytes) => {
        const bytes = randomBytes(s, 8000)
        const ranges: ByteRange[] = raw.map(([offset, length]) => ({ offset, length }))
        const { reader, state } = slowReader(bytes, s)
        const pieces = await all(readRanges(reader, ranges, { piece, aheadBytes }))
        const wrong: string[] = []
        for (const [i, r] of ranges.entries()) {
          const mine = pieces.filter((p) => p.range === i)
          if (mine.length !== (r.length === 0 ? 0 : Math.ceil(r.length / (piece ?? r.length)))) wrong.push(`range ${i}: ${mine.length} pieces`)
          let at = 0
          for (const p of mine) {
            if (p.at !== at) wrong.push(`range ${i}: a piece at ${p.at}, not ${at}`)
            if (p.bytes.length > (piece ?? Infinity)) wrong.push(`range ${i}: a piece of ${p.bytes.length} bytes`)
            at += p.bytes.length
            if (p.last !== (at === r.length)) wrong.push(`range ${i}: last marked wrong at ${at}`)
          }
          if (r.length > 0 && !equalBytes(concat(mine.map((p) => p.bytes)), bytes.subarray(r.offset, r.offset + r.length))) wrong.push(`range ${i}: other bytes`)
        }
        t.strictSame(wrong, [], 'each range whole, in pieces in order, the last marked')
        t.strictSame(pieces.map((p) => p.range), [...pieces.map((p) => p.range)].sort((a, b) => a - b), 'ranges in the order given')
        t.equal(state.inFlight, 0, 'no read left in flight')
      },
    ),
    { numRuns: 60 },
  )
})

t.test('reads ahead, within its bounds', async (t) => {
  const bytes = randomBytes(3, 100_000)
  const ranges = Array.from({ length: 100 }, (_, i) => ({ offset: i * 1000, length: 100 }))
  const many = slowReader(bytes, 7)
  await all(readRanges(many.reader, ranges))
  t.ok(many.state.most > 8, `small ranges: many reads in flight together (${many.state.most})`)
  t.ok(many.state.most <= 32, 'at most 32')
  const byBytes = slowReader(bytes, 7)
  await all(readRanges(byBytes.reader, ranges, { aheadBytes: 300 }))
  t.ok(byBytes.state.most <= 4, `aheadBytes bounds the bytes in flight (${byBytes.state.most} reads of 100 B under 300 B, and the one taken)`)
  const big = slowReader(bytes, 7)
  await all(readRanges(big.reader, [{ offset: 0, length: 50_000 }, { offset: 50_000, length: 50_000 }], { aheadBytes: 10 }))
  t.equal(big.state.most, 1, 'a read larger than the bound still goes, one at a time')
})

t.test('an early return waits for the reads already started, and reads nothing after', async (t) => {
  const bytes = randomBytes(4, 100_000)
  const { reader, state } = slowReader(bytes, 9)
  const ranges = Array.from({ length: 100 }, (_, i) => ({ offset: i * 1000, length: 500 }))
  for await (const p of readRanges(reader, ranges)) {
    if (p.range === 3) break
  }
  t.equal(state.inFlight, 0, 'nothing in flight once the loop has left')
  const reads = state.reads
  await sleep(10)
  t.equal(state.reads, reads, 'no read started after')
  t.ok(reads < 100, 'not every range was read')
})

t.test('a failed read fails at its turn, after the pieces before it; the others are waited for', async (t) => {
  const bytes = randomBytes(5, 100_000)
  const { reader, state } = slowReader(bytes, 11, (offset) => offset === 5000)
  const ranges = Array.from({ length: 20 }, (_, i) => ({ offset: i * 1000, length: 1000 }))
  const got: number[] = []
  await t.rejects(async () => {
    for await (const p of readRanges(reader, ranges)) got.push(p.range)
  }, /read at 5000 failed/)
  t.strictSame(got, [0, 1, 2, 3, 4], 'the ranges before the failed one, in order')
  t.equal(state.inFlight, 0, 'no read left in flight')
})

t.test('an aborted signal stops it with ABORTED; aborted before, it reads nothing', async (t) => {
  const bytes = randomBytes(6, 10_000)
  const { reader, state } = slowReader(bytes, 13)
  const ac = new AbortController()
  const ranges = Array.from({ length: 10 }, (_, i) => ({ offset: i * 1000, length: 1000 }))
  await t.rejects(async () => {
    for await (const p of readRanges(reader, ranges, { signal: ac.signal })) if (p.range === 1) ac.abort()
  }, { code: 'ABORTED' })
  t.equal(state.inFlight, 0, 'no read left in flight')
  const before = slowReader(bytes, 15)
  await t.rejects(all(readRanges(before.reader, ranges, { signal: AbortSignal.abort() })), { code: 'ABORTED' })
  t.equal(before.state.reads, 0, 'no read started')
})
