import t from 'tap'
import { BlockTable, sbcBaseChunks, sbcChunks } from '../../src/chunk/index.js'
import { randomBytes, splitStream } from '../support/random.js'

async function sbc(a: Uint8Array, b: Uint8Array, n: number, split: number[] = [4096]) {
  const table = new BlockTable(n)
  const ca = await sbcBaseChunks(splitStream(a, split), table)
  const cb = await sbcChunks(splitStream(b, split), table)
  return { ca, cb }
}

t.test('finds known blocks at any byte offset', async (t) => {
  const a = randomBytes(1, 64 * 1000)
  const b = new Uint8Array([7, 7, 7, ...a]) // shifted by 3 bytes: FSP would share nothing
  const { ca, cb } = await sbc(a, b, 1000)
  const known = new Set(ca.map((c) => c.fp))
  const sharedBytes = cb.filter((c) => known.has(c.fp)).reduce((s, c) => s + c.length, 0)
  t.equal(sharedBytes, a.length)
  t.same(cb[0], { offset: 0, length: 3, fp: cb[0]!.fp }, 'the 3 new bytes are a short gap chunk')
})

t.test('chunks tile the input whatever the buffer split', async (t) => {
  const a = randomBytes(2, 50000)
  const b = new Uint8Array([...a.subarray(10000, 30000), ...randomBytes(3, 7777), ...a.subarray(0, 9000)])
  const ref = (await sbc(a, b, 512, [b.length])).cb
  for (const split of [[1], [100, 3], [511, 513, 7000]]) {
    const { cb } = await sbc(a, b, 512, split)
    t.same(cb, ref, `split ${split}`)
  }
  let pos = 0
  for (const c of ref) {
    t.equal(c.offset, pos)
    t.ok(c.length >= 1 && c.length <= 512)
    pos += c.length
  }
  t.equal(pos, b.length)
})

t.test('a repeat inside the file itself is found ("earlier in this one")', async (t) => {
  const piece = randomBytes(4, 2048)
  const b = new Uint8Array([...piece, 1, 2, ...piece])
  const { cb } = await sbc(new Uint8Array(0), b, 1024)
  const fps = cb.map((c) => c.fp)
  t.ok(new Set(fps).size < fps.length, 'a block of the second copy matches one of the first')
})
