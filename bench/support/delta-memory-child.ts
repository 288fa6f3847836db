/**
 * The 2 GiB case of bench/delta.ts in a fresh process, so its peak RSS is dsync's alone and not
 * the parent's in-memory test data: `node delta-memory-child.js SEED TARGET DIR` runs one dsync
 * round and prints `{"round":…,"cpuMs":…,"sameBytes":…,"baseRss":…,"peakRss":…}`.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadCodecs } from '../../src/compress/index.js'
import { openFileSource } from '../../src/fs/index.js'
import { dsyncRound } from './delta-dsync.js'
import { peakRss } from './memory.js'

/**
 * Peak RSS of this process, bytes. Linux keeps getrusage's ru_maxrss across execve, so a child
 * spawned by a node parent starts with the parent's peak (a parent holding 400 MiB: the child
 * reported maxRSS 404 MiB, VmHWM 40 MiB). VmHWM belongs to this process's own memory map; the
 * rusage figure (bench/support/memory.ts) is the fallback off Linux.
 */
function ownPeakRss(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))
    if (m !== null) return Number(m[1]) * 1024
  } catch (err) {
    if (!(err instanceof Error)) throw err
  }
  return peakRss()
}

/** SHA-256 of a file, streamed (the comparison must stay in bounded memory too). */
async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256')
  for await (const b of openFileSource(path)) h.update(b)
  return h.digest('hex')
}

const [seed = '', target = '', dir = ''] = process.argv.slice(2)
await loadCodecs()
const baseRss = ownPeakRss()
const out = join(dir, 'dsync-big.out')
const c0 = process.cpuUsage()
const round = await dsyncRound(seed, target, out, dir)
const c = process.cpuUsage(c0)
const rss = ownPeakRss()
// Byte-for-byte check after the RSS reading: patchFile already verified the delta's SHA-256;
// this compares with the target file itself.
const same = (await fileSha256(out)) === (await fileSha256(target))
console.log(JSON.stringify({ round, cpuMs: (c.user + c.system) / 1000, sameBytes: same, baseRss, peakRss: rss }))
