/**
 * The 2 GiB case of bench/delta.ts in a fresh process, so its peak RSS is dsync's alone and not
 * the parent's in-memory test data: `node delta-memory-child.js SEED TARGET DIR` runs one dsync
 * round and prints `{"round":…,"sameBytes":…,"baseRss":…,"peakRss":…}`.
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { openFileSource } from '../../src/fs/index.js'
import { dsyncRound } from './delta-dsync.js'
import { peakRss } from './memory.js'

/** SHA-256 of a file, streamed (the comparison must stay in bounded memory too). */
async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256')
  for await (const b of openFileSource(path)) h.update(b)
  return h.digest('hex')
}

const [seed = '', target = '', dir = ''] = process.argv.slice(2)
const baseRss = peakRss()
const out = join(dir, 'dsync-big.out')
const round = await dsyncRound(seed, target, out, dir)
const rss = peakRss()
// Byte-for-byte check after the RSS reading: patchFile already verified the delta's SHA-256;
// this compares with the target file itself.
const same = (await fileSha256(out)) === (await fileSha256(target))
console.log(JSON.stringify({ round, sameBytes: same, baseRss, peakRss: rss }))
