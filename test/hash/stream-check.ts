import t from 'tap'
import fc from 'fast-check'
import { newStreamChecker, streamCheckBackend, wasmStreamChecker } from '../../src/hash/index.js'

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')

async function check(...parts: Uint8Array[]): Promise<string> {
  const c = await newStreamChecker()
  for (const p of parts) c.update(p)
  return hex(c.digest())
}

t.test('XXH3-128 golden values: those of the reference `xxhsum -H2` (xxHash 0.8, canonical big-endian form)', async (t) => {
  t.equal(await check(), '99aa06d3014798d86001c324468d497f', 'empty input')
  t.equal(await check(new TextEncoder().encode('a')), 'a96faf705af16834e6c632b61e964e1f', '"a"')
  t.equal(await check(new TextEncoder().encode('abc')), '06b05ab6733a618578af5f94892f3950', '"abc"')
})

t.test('the check does not depend on how the bytes are split, and checkers run side by side', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), fc.array(fc.nat(5000), { maxLength: 6 }), async (data, cuts) => {
      const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b)
      const parts: Uint8Array[] = []
      let from = 0
      for (const c of [...at, data.length]) {
        parts.push(data.subarray(from, c))
        from = c
      }
      const [a, b] = await Promise.all([newStreamChecker(), newStreamChecker()])
      for (const p of parts) {
        a.update(p)
        b.update(new Uint8Array(3).fill(p.length & 0xff)) // another stream, interleaved
      }
      t.equal(hex(a.digest()), await check(data))
      t.not(hex(b.digest()), '', 'the other stream has its own state')
    }),
    { numRuns: 100 },
  )
})

t.test('one changed bit changes the check', async (t) => {
  const data = new Uint8Array(1 << 16).map((_, i) => (i * 2654435761) >>> 24)
  const whole = await check(data)
  for (const at of [0, 1, 4095, 4096, 30000, 65535]) {
    const d = data.slice()
    d[at]! ^= 0x10
    t.not(await check(d), whole, `bit flipped at ${at}`)
  }
})

t.test('the native backend is the one used where it is installed, and gives the WebAssembly one\'s bytes', async (t) => {
  // npm installs the optional xxhash-addon with its prebuilt binary on Linux, macOS and Windows
  // (x64, arm64): the machines these tests run on.
  t.equal(streamCheckBackend(), 'xxhash-addon')
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 70_000 }), fc.array(fc.nat(70_000), { maxLength: 5 }), async (data, cuts) => {
      const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b)
      const [native, wasm] = await Promise.all([newStreamChecker(), wasmStreamChecker()])
      let from = 0
      for (const c of [...at, data.length]) {
        native.update(data.subarray(from, c))
        wasm.update(data.subarray(from, c))
        from = c
      }
      t.equal(hex(native.digest()), hex(wasm.digest()))
    }),
    { numRuns: 60 },
  )
})
