// Every session ends, and takes all its work with it: per-file work (queues, writers) must not
// pile listeners on the session's AbortSignal for as long as the session lives. Node warns
// (MaxListenersExceededWarning, printed on the user's terminal) past 10 listeners on one signal;
// a push and a pull of 40 files must not trigger it.
import t from 'tap'
import { pull, push } from '../../src/sync/index.js'
import { randomBytes } from '../support/random.js'
import { clientOpts, startServer } from '../support/sync.js'
import { tempTree } from '../support/temp.js'

t.test('a push and a pull of 40 files leave no abort-listener pile-up (no MaxListenersExceededWarning)', async (t) => {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < 40; i++) files[`f${i}.bin`] = randomBytes(600 + i, 3000 + i * 50)
  const home = await tempTree(t, files)
  const work = await tempTree(t)
  const local = await tempTree(t)
  const server = await startServer(t, work)
  const warnings: string[] = []
  const onWarning = (w: Error): void => void (w.name === 'MaxListenersExceededWarning' && warnings.push(`${w.message}\n${w.stack ?? ''}`))
  process.on('warning', onWarning)
  t.teardown(() => void process.off('warning', onWarning))
  await push(home, server.url, clientOpts())
  await pull(server.url, local, clientOpts())
  await new Promise((r) => setImmediate(r))
  t.same(warnings, [], 'no MaxListenersExceededWarning')
})
