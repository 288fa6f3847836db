import { bytesClasses } from './bytes-data.js'
import { refinedExchange } from '../../test/delta/support/refined.js'
import { makeDelta, equalBytes } from '../../test/delta/support/roundtrip.js'
import { blockSizeForChange } from '../../src/delta/index.js'

const regionsOf: Record<string, number> = { 'source edits': 4, 'insert + deletes': 6, 'overwrites 50M': 100, 'log append': 1, 'rename + edit': 3, 'pieces of others': 2 }
for (const c of bytesClasses(false)) {
  if (!(c.name in regionsOf)) continue
  const { before, after, basis } = c.make()
  let one = 0
  let ref = 0
  let detail = ''
  for (const [to, from] of basis) {
    if (from === null) continue
    const s = before.get(from)!
    const t = after.get(to)!
    const r = regionsOf[c.name]!
    const d = await makeDelta(s, t, { blockSize: blockSizeForChange(s.length, r) })
    one += d.sigBytes.length + d.delta.length
    const x = await refinedExchange(s, t, { regions: r })
    if (!equalBytes(x.rebuilt, t)) throw new Error('mismatch ' + to)
    ref += x.total
    if (detail === '') detail = JSON.stringify({ sig: x.signature, rounds: x.rounds, delta: x.delta, lit: x.literalBytes })
  }
  console.log(c.name.padEnd(18), 'one round', one, 'refined', ref, detail)
}
