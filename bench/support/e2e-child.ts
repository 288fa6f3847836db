/**
 * One end-to-end measurement in a fresh process, so its peak RSS is its own and not the
 * parent's 256 MiB test buffers: `node e2e-child.js <mode> <file> <runs>` prints
 * `{"medianMs":…,"medianCpuMs":…,"peakRss":…}`. Modes: read (the file source alone), digest (read +
 * whole-file SHA-256), cut (read + CDC cut points, no hashing), cdc / fsp (chunkPath:
 * read + cut + fingerprint + digest, what dsync does per file).
 */
import { chunkParams, chunkStream, cutterFor } from '../../src/chunk/index.js'
import { chunkPath, openFileSource } from '../../src/fs/index.js'
import { digestStream } from '../../src/hash/index.js'
import { peakRss } from './memory.js'
import { time } from './timing.js'

const MODES: Readonly<Record<string, (file: string) => Promise<unknown>>> = {
  read: async (file) => {
    let n = 0
    for await (const b of openFileSource(file)) n += b.length
    return n
  },
  digest: (file) => digestStream(openFileSource(file)),
  cut: async (file) => {
    let n = 0
    for await (const s of chunkStream(openFileSource(file), cutterFor(chunkParams()))) n += s.length
    return n
  },
  cdc: (file) => chunkPath(file, chunkParams()),
  fsp: (file) => chunkPath(file, chunkParams({ kind: 'fsp' })),
}

const [mode = '', file = '', runs = '3'] = process.argv.slice(2)
const fn = MODES[mode]
if (fn === undefined) {
  console.error(`e2e-child: unknown mode "${mode}": choose from ${Object.keys(MODES).join(', ')}`)
  process.exitCode = 2
} else {
  const t = await time(() => fn(file), { warmup: 0, runs: Number(runs) })
  console.log(JSON.stringify({ medianMs: t.medianMs, medianCpuMs: t.medianCpuMs, peakRss: peakRss() }))
}
