import t from 'tap'
import { clientMac, newChallenge, serverMac, verifyMac, type AuthTranscript } from '../../src/net/auth.js'

const base: AuthTranscript = { version: 1, serverChallenge: newChallenge(), clientChallenge: newChallenge(), role: 'push', subdir: 'a' }

t.test('the MAC proves the token and binds version, challenges, role and subdir', async (t) => {
  const mac = clientMac('tok', base)
  t.equal(mac.length, 32)
  t.ok(verifyMac(clientMac('tok', { ...base }), mac), 'same inputs, same MAC')
  t.notOk(verifyMac(clientMac('tok2', base), mac), 'another token')
  for (const change of [{ version: 2 }, { role: 'pull' as const }, { subdir: 'b' }, { subdir: '' }, { serverChallenge: newChallenge() }, { clientChallenge: newChallenge() }]) {
    t.notOk(verifyMac(clientMac('tok', { ...base, ...change }), mac), `changed ${Object.keys(change)[0]}`)
  }
  t.notOk(verifyMac(serverMac('tok', base), mac), 'a server proof is never a client proof (no reflection)')
  t.notOk(verifyMac(new Uint8Array(0), mac), 'an empty MAC never verifies')
})

t.test('challenges are fresh', async (t) => {
  t.notSame(newChallenge(), newChallenge())
  t.equal(newChallenge().length, 32)
})
