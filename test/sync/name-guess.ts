import t from 'tap'
import fc from 'fast-check'
import { extensionOf, nearestInSize, similarlyNamed, type NamedFile } from '../../src/sync/name-guess.js'

const name = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '0', '1', '-', '.'), maxLength: 12 })
const f = (path: string, size = 20_000): NamedFile => ({ path, size })

t.test('extensionOf: from the last dot, none for a leading dot', async (t) => {
  t.equal(extensionOf('plan.md'), '.md')
  t.equal(extensionOf('a.tar.gz'), '.gz')
  t.equal(extensionOf('.bashrc'), '')
  t.equal(extensionOf('Makefile'), '')
})

t.test('nearestInSize: the file nearest in size, the first of equals', async (t) => {
  t.equal(nearestInSize(20_000, [f('a/x.md', 5_000), f('b/x.md', 21_000), f('c/x.md', 19_500)])?.path, 'c/x.md')
  t.equal(nearestInSize(20_000, [f('a/x.md', 19_000), f('b/x.md', 21_000)])?.path, 'a/x.md')
  t.equal(nearestInSize(20_000, []), undefined)
})

t.test('similarlyNamed: a sibling whose name holds the new one whole, or is held by it; same extension, size within 2x', async (t) => {
  const series = ['notes/n002.txt', 'notes/n006.txt', 'notes/n010.txt'].map((p) => f(p))
  t.equal(similarlyNamed('n006-v2.txt', 20_100, series)?.path, 'notes/n006.txt', 'n006, not n002 (3 edits away too)')
  t.equal(similarlyNamed('report (1).txt', 20_000, [f('d/notes.txt'), f('d/report.txt')])?.path, 'd/report.txt')
  t.equal(similarlyNamed('report.txt', 20_000, [f('d/report (1).txt')])?.path, 'd/report (1).txt', 'the other way round')
  t.equal(similarlyNamed('notes.txt', 20_000, [f('d/old-notes.txt')])?.path, 'd/old-notes.txt')
  t.equal(similarlyNamed('app-2025-01-01.log', 20_000, [f('logs/app-2024-01-01.log'), f('logs/app-2024-12-31.log')]), undefined, 'dated names: neither holds the other')
  t.equal(similarlyNamed('report.md', 20_000, [f('d/report.txt')]), undefined, 'another extension')
  t.equal(similarlyNamed('report.txt', 20_000, [f('d/report-old.txt', 50_000)]), undefined, 'more than twice the size')
  t.equal(similarlyNamed('ab-new.txt', 20_000, [f('d/ab.txt')]), undefined, 'a name of fewer than 3 characters')
  t.equal(similarlyNamed('plan.txt', 20_000, []), undefined)
  t.equal(similarlyNamed('plan.txt', 20_000, [f('d/plan.txt')]), undefined, 'not the same name (that is a move)')
  t.equal(similarlyNamed('notes-v2.txt', 20_000, [f('d/notes-v2-x.txt'), f('d/notes.txt')])?.path, 'd/notes-v2-x.txt', 'the fewest characters added or removed (2, not 3)')
  t.equal(similarlyNamed('notes-draft.txt', 20_000, [f('d/notes.txt', 19_000), f('d/draft.txt', 20_500)])?.path, 'd/draft.txt', 'a tie goes to the nearest size')
})

t.test('similarlyNamed: a guess always holds the other name whole, and does not depend on the order of the siblings', async (t) => {
  // Siblings: random names, and the target's name with something added before or after it.
  const sibling = fc.record({ kind: fc.constantFrom(0, 1, 2), piece: name, size: fc.integer({ min: 10_000, max: 20_000 }) })
  let guessed = 0
  fc.assert(
    fc.property(name, fc.integer({ min: 10_000, max: 20_000 }), fc.array(sibling, { maxLength: 8 }), (n, size, made) => {
      const byPath = new Map<string, NamedFile>()
      for (const m of made) {
        const stem = m.kind === 0 ? m.piece : m.kind === 1 ? n + m.piece : m.piece + n
        byPath.set(`d/${stem}.txt`, { path: `d/${stem}.txt`, size: m.size })
      }
      const siblings = [...byPath.values()]
      const a = similarlyNamed(`${n}.txt`, size, siblings)
      const b = similarlyNamed(`${n}.txt`, size, [...siblings].reverse())
      if (a?.path !== b?.path) return false
      if (a === undefined) return true
      guessed++
      const other = a.path.slice(2, -4)
      return other !== n && (other.includes(n) || n.includes(other)) && Math.min(other.length, n.length) >= 3 && a.size <= 2 * size && size <= 2 * a.size
    }),
    { numRuns: 1000 },
  )
  t.ok(guessed > 100, `${guessed} of 1000 cases had a guess`)
})
