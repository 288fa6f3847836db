import t from 'tap'
import { isFastCheck, preferredHasher, sameCheck, targetHasher } from '../../src/delta/index.js'
import { digestBytes } from '../../src/hash/index.js'
import { randomBytes } from '../support/random.js'

t.test('a check is a SHA-256 or an XXH3-128; two checks are the same only of one kind, with the same bytes', async (t) => {
  const bytes = randomBytes(1, 100_000)
  const hash = async (fast: boolean, data: Uint8Array) => {
    const h = await targetHasher(fast)
    h.update(data.subarray(0, 40_000))
    h.update(data.subarray(40_000))
    return h.digest()
  }
  const sha = await hash(false, bytes)
  const xxh = await hash(true, bytes)
  t.equal(sha, digestBytes(bytes), 'SHA-256, in pieces: the digest of the whole')
  t.notOk(isFastCheck(sha))
  t.ok(isFastCheck(xxh) && xxh.length === 16, 'XXH3-128: 16 bytes')
  t.ok(sameCheck(sha, await hash(false, bytes)) && sameCheck(xxh, await hash(true, bytes)), 'same bytes, same kind: same')
  const other = Buffer.from(bytes)
  other[5] ^= 1
  t.notOk(sameCheck(xxh, await hash(true, other)), 'another file: not the same')
  t.notOk(sameCheck(sha, await hash(false, other)))
  t.notOk(sameCheck(sha, xxh) || sameCheck(xxh, sha), 'of two kinds: never the same')
  const preferred = await preferredHasher(true)
  preferred.update(bytes)
  t.ok(sameCheck(preferred.digest(), xxh), 'a sender that prefers XXH3-128 gets it where it loads')
  const plain = await preferredHasher(false)
  plain.update(bytes)
  t.equal(plain.digest(), sha)
})
