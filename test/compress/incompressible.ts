import fc from 'fast-check'
import t from 'tap'
import { looksIncompressible } from '../../src/compress/index.js'
import { randomBytes } from '../support/random.js'

const text = (n: number): Uint8Array => new TextEncoder().encode('export function main(argv: string[]): number { return argv.length }\n'.repeat(Math.ceil(n / 68))).subarray(0, n)

t.test('random bytes look incompressible; text, zeros and small frames do not', async (t) => {
  t.ok(looksIncompressible(randomBytes(1, 1 << 20)))
  t.notOk(looksIncompressible(text(1 << 20)))
  t.notOk(looksIncompressible(new Uint8Array(1 << 20)))
  t.notOk(looksIncompressible(randomBytes(2, 60 * 1024)), 'below 64 KiB the compressor decides')
})

t.test('random-looking data with short-range repeats is left to the compressor', async (t) => {
  const block = randomBytes(3, 1000)
  const repeated = new Uint8Array(1 << 20)
  for (let at = 0; at < repeated.length; at += 1000) repeated.set(block.subarray(0, Math.min(1000, repeated.length - at)), at)
  t.notOk(looksIncompressible(repeated))
})

t.test('a frame with 40 KiB of text anywhere is compressed', async (t) => {
  for (const at of [0, 100_000, 523_288, (1 << 20) - 40 * 1024]) {
    const mixed = randomBytes(4, 1 << 20)
    mixed.set(text(40 * 1024), at)
    t.notOk(looksIncompressible(mixed), `text at ${at}`)
  }
})

t.test('random frames of many seeds and sizes are all found incompressible (no false alarms)', async (t) => {
  let alarms = 0
  for (let s = 0; s < 200; s++) if (!looksIncompressible(randomBytes(100 + s, 64 * 1024 + s * 4099))) alarms++
  t.equal(alarms, 0)
})

/** The probe's definition written plainly, as the oracle for the fast one's shortcuts (a rolling
 *  word, and slots stamped by slice instead of a table cleared for each): per 1 KiB slice, the
 *  order-0 entropy, and the 4-byte strings found again in a table of 1,024 slots (a fresh Map a
 *  slice) that keeps the last string hashed to each slot. */
function plainProbe(raw: Uint8Array, slices: number): boolean {
  if (raw.length < 64 * 1024) return false
  const step = Math.floor((raw.length - 1024) / (slices - 1))
  for (let s = 0; s < slices; s++) {
    const slice = raw.subarray(s * step, s * step + 1024)
    const counts = new Map<number, number>()
    for (const b of slice) counts.set(b, (counts.get(b) ?? 0) + 1)
    let entropy = 0
    for (const c of counts.values()) entropy -= (c / 1024) * Math.log2(c / 1024)
    const table = new Map<number, number>()
    let repeats = 0
    for (let i = 0; i + 4 <= slice.length; i++) {
      const word = (slice[i]! | (slice[i + 1]! << 8) | (slice[i + 2]! << 16) | (slice[i + 3]! << 24)) >>> 0
      const slot = Math.imul(word, 0x9e3779b1) >>> 22
      if (table.get(slot) === word) repeats++
      table.set(slot, word)
    }
    if (repeats > 8 || entropy < 7.5) return false
  }
  return true
}

t.test('the probe answers as its plain definition on random frames with planted repeats and runs', async (t) => {
  // Random bytes (few collisions in the 1,024-slot table), then a few 4–40-byte copies inside
  // the frame (repeats), a run of one byte (low entropy), or nothing.
  const frame = fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    size: fc.integer({ min: 64 * 1024, max: 300 * 1024 }),
    copies: fc.array(fc.record({ from: fc.nat(), to: fc.nat(), len: fc.integer({ min: 4, max: 40 }) }), { maxLength: 400 }),
    run: fc.option(fc.record({ at: fc.nat(), len: fc.integer({ min: 1, max: 2048 }) }), { nil: undefined }),
    slices: fc.constantFrom(32, 8),
  })
  let disagreements = 0
  let incompressible = 0
  fc.assert(
    fc.property(frame, ({ seed, size, copies, run, slices }) => {
      const raw = randomBytes(seed, size)
      // copies land near each other (within 2 KiB), so some fall inside one probed slice
      for (const c of copies) {
        const to = c.to % (size - 64)
        const from = Math.max(0, to - 1 - (c.from % 2048))
        raw.copyWithin(to, from, from + Math.min(c.len, size - to))
      }
      if (run !== undefined) raw.fill(0x41, run.at % size, (run.at % size) + run.len)
      const fast = looksIncompressible(raw, slices)
      if (fast) incompressible++
      if (fast !== plainProbe(raw, slices)) disagreements++
      return true
    }),
    { numRuns: 300 },
  )
  t.equal(disagreements, 0, 'no frame judged differently')
  t.ok(incompressible > 0 && incompressible < 300, `both answers seen (${incompressible} of 300 incompressible)`)
})
