import t from 'tap'
import fc from 'fast-check'
import { editDistance, extensionOf, longestCommonRun, similarlyNamed, type NamedFile } from '../../src/sync/name-guess.js'

const name = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '0', '1', '-', '.'), maxLength: 12 })

t.test('editDistance is a metric, 0 only for equal names, and at most the longer length', async (t) => {
  fc.assert(
    fc.property(name, name, name, (a, b, c) => {
      const d = editDistance(a, b)
      if (d !== editDistance(b, a)) return false
      if ((d === 0) !== (a === b)) return false
      if (d < Math.abs(a.length - b.length) || d > Math.max(a.length, b.length)) return false
      return editDistance(a, c) <= d + editDistance(b, c)
    }),
  )
  t.equal(editDistance('n006', 'n006-v2'), 3)
  t.equal(editDistance('kitten', 'sitting'), 3)
})

t.test('longestCommonRun is the longest string found whole in both', async (t) => {
  fc.assert(
    fc.property(name, name, (a, b) => {
      const n = longestCommonRun(a, b)
      if (n !== longestCommonRun(b, a) || n > Math.min(a.length, b.length)) return false
      let found = n === 0
      for (let i = 0; i + n <= a.length && !found; i++) found = b.includes(a.slice(i, i + n))
      let longer = false
      for (let i = 0; i + n + 1 <= a.length && !longer; i++) longer = b.includes(a.slice(i, i + n + 1))
      return found && !longer
    }),
  )
  t.equal(longestCommonRun('n002', 'n006-v2'), 3)
  t.equal(longestCommonRun('notes', 'old-notes'), 5)
})

t.test('extensionOf: from the last dot, none for a leading dot', async (t) => {
  t.equal(extensionOf('plan.md'), '.md')
  t.equal(extensionOf('a.tar.gz'), '.gz')
  t.equal(extensionOf('.bashrc'), '')
  t.equal(extensionOf('Makefile'), '')
})

t.test('similarlyNamed: the sibling that keeps most of the name in one piece, same extension, size within 2x', async (t) => {
  const f = (path: string, size = 20_000): NamedFile => ({ path, size })
  const series = ['notes/n002.txt', 'notes/n006.txt', 'notes/n010.txt'].map((p) => f(p))
  t.equal(similarlyNamed('n006-v2.txt', 20_100, series)?.path, 'notes/n006.txt', 'n006, though n002 is as few edits away')
  t.equal(similarlyNamed('report (1).txt', 20_000, [f('d/notes.txt'), f('d/report.txt')])?.path, 'd/report.txt')
  t.equal(similarlyNamed('notes.txt', 20_000, [f('d/old-notes.txt')])?.path, 'd/old-notes.txt')
  t.equal(similarlyNamed('report.md', 20_000, [f('d/report.txt')]), undefined, 'another extension')
  t.equal(similarlyNamed('report.txt', 20_000, [f('d/report-old.txt', 50_000)]), undefined, 'more than twice the size')
  t.equal(similarlyNamed('summary.txt', 20_000, [f('d/report.txt')]), undefined, 'names with little in common')
  t.equal(similarlyNamed('ab.txt', 20_000, [f('d/abc.txt')]), undefined, 'fewer than 3 characters kept')
  t.equal(similarlyNamed('plan.txt', 20_000, []), undefined)
  t.equal(similarlyNamed('plan.txt', 20_000, [f('d/plan.txt')]), undefined, 'not the same name (that is a move)')
  t.equal(similarlyNamed('plan-2.txt', 20_000, [f('d/plan-1.txt', 19_000), f('d/plan-3.txt', 20_500)])?.path, 'd/plan-3.txt', 'a tie goes to the nearest size')
})

t.test('similarlyNamed does not depend on the order of the siblings', async (t) => {
  const sibling = fc.record({ path: name.map((n) => `d/${n}.txt`), size: fc.integer({ min: 10_000, max: 20_000 }) })
  let guessed = 0
  fc.assert(
    fc.property(name, fc.integer({ min: 10_000, max: 20_000 }), fc.uniqueArray(sibling, { selector: (s) => s.path, maxLength: 8 }), (n, size, siblings) => {
      const a = similarlyNamed(`${n}.txt`, size, siblings)
      const b = similarlyNamed(`${n}.txt`, size, [...siblings].reverse())
      if (a !== undefined) guessed++
      return a?.path === b?.path
    }),
    { numRuns: 500 },
  )
  t.ok(guessed > 0, `${guessed} of 500 cases had a guess`)
})
