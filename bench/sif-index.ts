/**
 * The similarity index at scale (issue 10): `dsync similar` query time on a warm index and
 * `dsync groups` time, for N files (default 100,000 of ~8 KiB; `--files N --avg BYTES`). One in
 * ten files is an edited copy of an earlier one (100 bytes in every 1000 replaced), so groups
 * exist. Files are made and sketched in memory (no disk writes but the index): the figures are
 * the index's, sketching speed is in bench/accuracy.ts.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chunkParams } from '../src/chunk/index.js'
import { sketchBytes, type Sketch } from '../src/similarity/index.js'
import { findSimilar, groupSimilar, Store } from '../src/store/index.js'
import { seededBytes, xorshift32 } from './support/data.js'
import { printEnvironment, printTable, type Cell } from './support/table.js'
import { median } from './support/timing.js'

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  return i < 0 ? fallback : Number(process.argv[i + 1])
}

function edited(a: Uint8Array, seed: number): Uint8Array {
  const parts: Uint8Array[] = []
  for (let p = 0; p < a.length; p += 1000) parts.push(a.subarray(p, p + 900), seededBytes(seed + p, Math.min(100, a.length - p)))
  return Buffer.concat(parts)
}

export async function run(): Promise<void> {
  printEnvironment()
  const files = arg('--files', 100_000)
  const avg = arg('--avg', 8192)
  const dir = await mkdtemp(join(tmpdir(), 'dsync-bench-sif-'))
  const store = await Store.open(dir, { params: chunkParams() })
  const index = store.sketchIndex()
  const next = xorshift32(77)
  const queries: Sketch[] = []
  let bytes = 0
  let sketchMs = 0
  let putMs = 0
  let batch: { path: string; size: number; mtimeMs: number; sketch: Sketch }[] = []
  let prev: Uint8Array = new Uint8Array(0)
  for (let i = 0; i < files; i++) {
    const size = Math.max(64, Math.round(avg * (0.25 + (next() % 1500) / 1000)))
    const data = i % 10 === 9 && prev.length > 0 ? edited(prev, i) : seededBytes(i + 1, size)
    bytes += data.length
    const t0 = performance.now()
    const sketch = sketchBytes(data)
    sketchMs += performance.now() - t0
    if (i % (files / 50) === 0) queries.push(sketchBytes(edited(data, i + 5)))
    batch.push({ path: `d${i % 100}/f${i}.bin`, size: data.length, mtimeMs: 0, sketch })
    prev = data
    if (batch.length === 1000 || i === files - 1) {
      const t1 = performance.now()
      await index.putMany(batch)
      putMs += performance.now() - t1
      batch = []
    }
  }
  const onDisk = (await stat(join(dir, '.dsync', 'state.mdb'))).size
  const queryMs: number[] = []
  let found = 0
  for (let round = 0; round < 2; round++) {
    for (const q of queries) {
      const t0 = performance.now()
      const r = findSimilar(index, q, { metric: 'dice', threshold: 0.25, top: 10 })
      if (round === 1) {
        queryMs.push(performance.now() - t0)
        found += r.length > 0 ? 1 : 0
      }
    }
  }
  const g0 = performance.now()
  const c0 = process.cpuUsage()
  const groups = groupSimilar(index, { metric: 'dice', threshold: 0.5 })
  const groupsCpu = process.cpuUsage(c0)
  const groupsMs = performance.now() - g0
  await store.close()
  await rm(dir, { recursive: true, force: true })
  const rows: Cell[][] = [
    ['files', files],
    ['data, MiB', bytes / 2 ** 20],
    ['sketching, s (in memory)', sketchMs / 1000],
    ['index writes, s', putMs / 1000],
    ['index on disk, MiB', onDisk / 2 ** 20],
    ['index / data, %', (100 * onDisk) / bytes],
    [`similar: median ms per query (warm, ${queryMs.length} queries)`, median(queryMs)],
    ['similar: worst ms', Math.max(...queryMs)],
    ['similar: queries that found their source', found],
    ['groups: s (wall)', groupsMs / 1000],
    ['groups: CPU s', (groupsCpu.user + groupsCpu.system) / 1e6],
    ['groups found', groups.length],
  ]
  printTable(`Similarity index: ${files} files of ~${avg} bytes`, ['measure', 'value'], rows, 2)
}
