import t from 'tap'
import fc from 'fast-check'
import { CODEC } from '../../src/compress/index.js'
import { applyDelta, storedDelta, type TargetCheck } from '../../src/delta/index.js'
import { DeltaWriter } from '../../src/delta/delta-writer.js'
import { LITERAL_FRAME_BYTES } from '../../src/delta/delta-format.js'
import { digestBytes, newStreamChecker } from '../../src/hash/index.js'
import { randomBytes } from '../support/random.js'

async function streamCheck(content: Uint8Array): Promise<Uint8Array> {
  const c = await newStreamChecker()
  c.update(content)
  return c.digest()
}

/** What a DeltaWriter writes for the same file: storedDelta's definition. */
function written(content: Uint8Array, check: TargetCheck): Buffer {
  const w = new DeltaWriter(0, { codec: CODEC.STORED, fastCheck: typeof check !== 'string' })
  w.literal(content)
  w.finish(content.length, check)
  return Buffer.concat(w.take())
}

async function rebuilt(delta: readonly Uint8Array[], check: TargetCheck, size: number): Promise<Buffer> {
  const out: Uint8Array[] = []
  const res = await applyDelta(null, (async function* () {
    yield* delta
  })(), { write: async (b: Uint8Array) => void out.push(b.slice()) }, { expect: typeof check === 'string' ? { size, digest: check } : { size } })
  t.equal(res.literalBytes, size)
  return Buffer.concat(out)
}

// The sizes where a varint or a buffer changes length, and one frame's worth and past it (the
// one-buffer path ends at LITERAL_FRAME_BYTES; past it the writer itself writes it).
const EDGES = [0, 1, 127, 128, 16_383, 16_384, 16_385, LITERAL_FRAME_BYTES - 1, LITERAL_FRAME_BYTES, LITERAL_FRAME_BYTES + 1]

t.test('storedDelta writes what a DeltaWriter writes, for both checks, at every edge size', async (t) => {
  for (const size of EDGES) {
    const content = randomBytes(size + 1, size)
    for (const check of [digestBytes(content), await streamCheck(content)] as TargetCheck[]) {
      const kind = typeof check === 'string' ? 'SHA-256' : 'XXH3-128'
      const delta = storedDelta(content, check)
      t.same(Buffer.concat(delta), written(content, check), `${size} bytes, ${kind}`)
      if (size > 0) t.ok(delta.some((p) => p.buffer === content.buffer && p.length >= Math.min(size, LITERAL_FRAME_BYTES)), `${size} bytes, ${kind}: the content goes as a view of itself, not copied`)
      t.same(await rebuilt(delta, check, size), Buffer.from(content), `${size} bytes, ${kind}: rebuilds the file`)
    }
  }
})

t.test('storedDelta is a DeltaWriter around the content, uncopied, for any content (property)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 40_000 }), fc.boolean(), async (content, fast) => {
      const check: TargetCheck = fast ? await streamCheck(content) : digestBytes(content)
      const delta = storedDelta(content, check)
      return (content.length === 0 || delta[1] === content) && Buffer.concat(delta).equals(written(content, check))
    }),
    { numRuns: 200 },
  )
})

t.test('storedDelta refuses a check of the wrong length', async (t) => {
  t.throws(() => storedDelta(new Uint8Array(10), new Uint8Array(5)), { code: 'INTERNAL' })
  t.throws(() => storedDelta(new Uint8Array(10), 'abcd' as TargetCheck), { code: 'INTERNAL' })
})
