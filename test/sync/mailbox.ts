import t from 'tap'
import { DsyncError } from '../../src/errors.js'
import { Mailbox } from '../../src/sync/mailbox.js'

t.test('close: its error is made only when a wait needs it, once; a waiter is rejected with it', async (t) => {
  let made = 0
  const why = (): DsyncError => (made++, new DsyncError('IO', 'the sender sent nothing'))
  const idle = new Mailbox<number>(new AbortController().signal, 'match list')
  idle.close(why)
  idle.close(why)
  t.equal(made, 0, 'nobody waited: no error made')
  const first = idle.next().catch((err: unknown) => err)
  const second = idle.next().catch((err: unknown) => err)
  t.match(await first, { code: 'IO', message: 'the sender sent nothing' })
  t.equal(await second, await first, 'later waits get the same error')
  t.equal(made, 1)
  t.throws(() => idle.push(1), { code: 'BAD_MESSAGE', message: /after the exchange it belongs to ended/ })

  const waited = new Mailbox<number>(new AbortController().signal, 'match list')
  const wait = waited.next().catch((err: unknown) => err)
  waited.close(() => new DsyncError('SOURCE_CHANGED', 'changed while read'))
  t.match(await wait, { code: 'SOURCE_CHANGED' })
})

t.test('a message pushed before the wait is kept; one more is BAD_MESSAGE', async (t) => {
  const box = new Mailbox<number>(new AbortController().signal, 'sketch')
  box.push(7)
  t.throws(() => box.push(8), { code: 'BAD_MESSAGE', message: /before the message it answers/ })
  t.equal(await box.next(), 7)
})
