import t from 'tap'
import { mergeStory } from '../../src/cli/actions/demo.js'
import { runCli } from '../support/cli.js'

t.test('dsync demo: the whole story on a local server, ending with identical trees', async (t) => {
  const r = await runCli(['demo'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /1\. First push/)
  t.match(r.stdout, /^\s+moved\s+reports\/2026\/q3-final\.md\s+from reports\/q3\.md/m, 'a moved file is renamed on the server (--delete)')
  t.match(r.stdout, /^\s+delta\s+notes\/ideas-v2\.md\s+from notes\/ideas\.md/m, 'a renamed and edited file is a delta from its old path')
  t.match(r.stdout, /^\s+0 files transferred/m, 'the fourth push sends nothing')
  t.match(r.stdout, /identical \(content, modes, links\): yes/)

  const headings = [...r.stdout.matchAll(/^== (\d+)\./gm)].map((m) => Number(m[1]))
  t.same(headings, [1, 2, 3, 4, 5], 'each heading once, numbered in order')
  const twoWay = r.stdout.split('== 5.')[1]!
  t.match(twoWay, /^\s+→ delta\s+notes\/todo\.md \(remote\)/m, 'two-way: home\'s edit is sent')
  t.match(twoWay, /^\s+← delta\s+reports\/budget\.csv \(local\)/m, 'two-way: work\'s edit is received')
  t.match(twoWay, /^\s+⇄ conflict\s+notes\/plan\.md\s+changed on both sides: the local version is kept as notes\/plan\.dsync-conflict-home-\d{8}-\d{6}\.md/m, 'two-way: the file both edited is a conflict, home\'s version kept as a copy')
  t.match(twoWay, /two-way: the conflict copy notes\/plan\.dsync-conflict-home-\d{8}-\d{6}\.md holds home's version on both machines/)
  t.notMatch(r.stdout, /\b1 files\b/, 'pluralized')
  for (const m of r.stdout.matchAll(/^\s+files\s+(\d+) \((\d+) transferred, (\d+) copied locally, (\d+) unchanged(?:, (\d+) conflicts?)?(?:, (\d+) failed)?\)$/gm)) {
    const [total, ...parts] = m.slice(1).map((x) => Number(x ?? 0))
    t.equal(parts.reduce((a, b) => a + b, 0), total, `the parts add up: ${m[0].trim()}`)
  }
  t.equal([...r.stdout.matchAll(/^\s+files\s+\d+ \(/gm)].length, 3, 'three --stats blocks')
  const noop = r.stdout.split('== 4.')[1]!.split('== Result')[0]!
  t.notMatch(noop, /speedup +[\d.]+×/, 'no speedup figure for a no-op')
  t.match(noop, /speedup +none to measure: nothing changed, [\d.]+ (B|KiB) on the wire/)
  t.match(r.stdout, /notes\/summary\.md (went whole.*\n.*neither is similar enough alone.*\n +\(the most similar, .*, is [\d.]+% similar; the threshold is 50\.0%\)|, made of pieces of two files the server has, went as one delta from both)/)
})

t.test('the merge story follows what happened to the file', async (t) => {
  t.match(mergeStory({ path: 'notes/summary.md', action: 'delta', seed: 'archive/old-draft.md', similarity: 0.7 }), /went as a delta from archive\/old-draft\.md/)
  t.match(mergeStory({ path: 'notes/summary.md', action: 'new' }), /went whole[^]*\(no file shares enough of it;/)
  t.match(mergeStory({ path: 'notes/summary.md', action: 'new', seed: 'a.md', similarity: 0.4, candidates: [{ path: 'a.md', similarity: 0.4 }] }), /the content index found only one of them/)
  t.match(mergeStory({ path: 'notes/summary.md', action: 'new', seed: 'a.md', similarity: 0.4, candidates: [{ path: 'a.md', similarity: 0.4 }, { path: 'b.md', similarity: 0.3 }] }), /nor are the two together/)
  t.match(mergeStory({ path: 'notes/summary.md', action: 'delta', seed: 'a.md', similarity: 0.6, message: 'and b.md as a second seed (40% more of the file)' }), /went as one delta from both\n +\(a\.md and b\.md; 60\.0% similar to the pair\)/)
})
