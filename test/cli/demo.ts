import t from 'tap'
import { runCli } from '../support/cli.js'

t.test('dsync demo: the whole story on a local server, ending with identical trees', async (t) => {
  const r = await runCli(['demo'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /1\. First push/)
  t.match(r.stdout, /^\s+copy\s+reports\/2026\/q3-final\.md\s+copy of reports\/q3\.md/m, 'a moved file is a local copy')
  t.match(r.stdout, /^\s+delta\s+notes\/ideas-v2\.md\s+from notes\/ideas\.md/m, 'a renamed and edited file is a delta from its old path')
  t.match(r.stdout, /^\s+0 files transferred/m, 'the third push sends nothing')
  t.match(r.stdout, /identical \(content, modes, links\): yes/)
})
