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
