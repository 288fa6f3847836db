import t from 'tap'
import { chunkParams } from '../../src/chunk/index.js'

t.test('defaults: avg 8 KiB, min avg/4, max avg*8', async (t) => {
  t.match(chunkParams(), { kind: 'cdc', min: 2048, avg: 8192, max: 65536 })
  t.match(chunkParams({ avg: 1 << 20 }), { min: 1 << 18, max: 1 << 23 })
})

t.test('nonsense sizes are USAGE errors that name the option', async (t) => {
  t.throws(() => chunkParams({ avg: 10 }), { code: 'USAGE', message: /--avg/ })
  t.throws(() => chunkParams({ avg: 8192, min: 9000 }), { code: 'USAGE', message: /min ≤ avg ≤ max/ })
  t.throws(() => chunkParams({ avg: 8192, max: 1 << 30 }), { code: 'USAGE', message: /--max/ })
  t.throws(() => chunkParams({ avg: 1.5 }), { code: 'USAGE' })
})
