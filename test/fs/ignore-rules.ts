import t from 'tap'
import { IgnoreRules } from '../../src/fs/index.js'

t.test('root rules: gitignore syntax, dir-only patterns match only dirs', async (t) => {
  const r = IgnoreRules.root().withFile('', '*.log\nbuild/\n/top.txt\n')
  t.ok(r.ignores('x.log', false))
  t.ok(r.ignores('deep/down/x.log', false))
  t.ok(r.ignores('build', true))
  t.notOk(r.ignores('build', false), 'a file named build is not the dir pattern build/')
  t.ok(r.ignores('top.txt', false))
  t.notOk(r.ignores('sub/top.txt', false), 'anchored pattern applies at its own level only')
  t.notOk(r.ignores('x.txt', false))
})

t.test('a nested file applies to its subtree, relative to its directory, and can re-include', async (t) => {
  const r = IgnoreRules.root().withFile('', '*.log\n').withFile('sub', '!keep.log\n/only-here\n')
  t.ok(r.ignores('sub/x.log', false))
  t.notOk(r.ignores('sub/keep.log', false), 'deeper negation wins')
  t.ok(r.ignores('sub/only-here', false))
  t.notOk(r.ignores('sub/deeper/only-here', false))
})

t.test('--exclude patterns cannot be re-included by a .dsyncignore', async (t) => {
  const r = IgnoreRules.root(['*.tmp', 'cache/']).withFile('', '!a.tmp\n')
  t.ok(r.ignores('a.tmp', false))
  t.ok(r.ignores('x/cache', true))
  t.notOk(r.ignores('x/cache', false))
})
