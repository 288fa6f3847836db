import t from 'tap'
import { Fifo } from '../../src/net/fifo.js'

t.test('a Fifo gives back what it was given, in order, through interleaved pushes and takes', async (t) => {
  const q = new Fifo<number>()
  t.equal(q.shift(), undefined, 'empty')
  const model: number[] = []
  let next = 0
  let x = 12345
  // 50,000 operations, more pushes than takes at first and then fewer: the compaction runs many
  // times, with items both before and after the head.
  for (let i = 0; i < 50_000; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    const pushFirst = i < 30_000 ? x % 3 !== 0 : x % 3 === 0
    if (pushFirst) {
      q.push(next)
      model.push(next++)
    } else {
      const got = q.shift()
      const want = model.shift()
      if (got !== want) t.fail(`took ${got} where ${want} was next`)
    }
    if (q.length !== model.length) t.fail(`length ${q.length} where ${model.length} are queued`)
  }
  t.ok(model.length > 1000, 'items left to drain')
  while (model.length > 0) if (q.shift() !== model.shift()) t.fail('order lost while draining')
  t.equal(q.length, 0)
  t.equal(q.shift(), undefined, 'empty again')
})
