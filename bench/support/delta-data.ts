/**
 * Seeded seed/target pairs for bench/delta.ts: code-like text, logs, binary with edits, and a
 * 2 GiB pair written by streaming. The same bytes on every run and machine.
 */
import { open } from 'node:fs/promises'
import { MiB, seededBytes } from './data.js'

/** xorshift32, the generator of test/support/random.ts, for choices rather than bytes. */
class Rng {
  #s: number
  constructor(seed: number) {
    this.#s = seed >>> 0 || 1
  }
  next(): number {
    let s = this.#s
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    this.#s = s >>> 0
    return this.#s
  }
  /** 0..n-1 */
  int(n: number): number {
    return this.next() % n
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!
  }
}

const SYLLABLES = ['get', 'set', 'file', 'path', 'chunk', 'size', 'read', 'write', 'node', 'tree', 'hash', 'peer', 'sync',
  'seed', 'block', 'delta', 'buf', 'len', 'key', 'map', 'list', 'item', 'count', 'index', 'state', 'next', 'open', 'close']
const TYPES = ['number', 'string', 'Uint8Array', 'boolean', 'FileRecord', 'ChunkRef', 'Promise<void>', 'readonly string[]']

/** One line of TypeScript-looking code; `depth` tracks braces so indentation looks real. */
function codeLine(r: Rng, names: readonly string[], depth: { n: number }): string {
  const id = (): string => r.pick(names)
  const ind = '  '.repeat(depth.n)
  switch (r.int(depth.n === 0 ? 3 : 10)) {
    case 0:
      depth.n++
      return `export function ${id()}(${id()}: ${r.pick(TYPES)}, ${id()}: ${r.pick(TYPES)}): ${r.pick(TYPES)} {`
    case 1:
      return `import { ${id()}, ${id()} } from './${id()}.js'`
    case 2:
      return `// ${id()} keeps the ${id()} of each ${id()} until ${id()} is closed`
    case 3:
      depth.n++
      return `${ind}if (${id()}.${id()} > ${r.int(4096)}) {`
    case 4:
      depth.n--
      return `${ind.slice(2)}}`
    case 5:
      return `${ind}return ${id()}.${id()}(${id()}, ${r.int(100)})`
    case 6:
      return `${ind}${id()}.${id()} = await ${id()}('${id()}-${r.int(1000)}')`
    case 7:
      depth.n++
      return `${ind}for (const ${id()} of ${id()}.${id()}) {`
    default:
      return `${ind}const ${id()} = ${id()}(${id()}, ${r.int(1 << 16)})`
  }
}

function identifiers(r: Rng, n: number): string[] {
  return Array.from({ length: n }, () => {
    const a = r.pick(SYLLABLES)
    const b = r.pick(SYLLABLES)
    return a + b[0]!.toUpperCase() + b.slice(1) + (r.int(3) === 0 ? String(r.int(10)) : '')
  })
}

/** `bytes` bytes of code-like text (ASCII): compressible ~4× by zstd, like real source. */
export function codeText(seed: number, bytes: number): Uint8Array {
  const r = new Rng(seed)
  const names = identifiers(r, 600)
  const depth = { n: 0 }
  const lines: string[] = []
  let n = 0
  while (n < bytes) {
    const l = codeLine(r, names, depth) + '\n'
    if (depth.n > 6) depth.n = 6
    if (depth.n < 0) depth.n = 0
    lines.push(l)
    n += l.length
  }
  return Buffer.from(lines.join(''), 'latin1').subarray(0, bytes)
}

/** `edits` small edits of code text at seeded lines: a line inserted, deleted or rewritten. */
export function editCode(text: Uint8Array, seed: number, edits: number): Uint8Array {
  const r = new Rng(seed)
  const names = identifiers(new Rng(seed + 1), 600)
  let s = Buffer.from(text).toString('latin1')
  const at = Array.from({ length: edits }, () => r.int(s.length)).sort((a, b) => b - a) // last first: offsets stay valid
  for (const p of at) {
    const start = s.lastIndexOf('\n', p) + 1
    const end = s.indexOf('\n', p) + 1 || s.length
    const line = codeLine(r, names, { n: 1 }) + '\n'
    const kind = r.int(3)
    if (kind === 0) s = s.slice(0, start) + line + s.slice(start)
    else if (kind === 1) s = s.slice(0, start) + s.slice(end)
    else s = s.slice(0, start) + line + s.slice(end)
  }
  return Buffer.from(s, 'latin1')
}

/** Log lines (timestamp, level, worker, request) from line `first` on, until `bytes` bytes. */
export function logText(seed: number, first: number, bytes: number): Uint8Array {
  const r = new Rng(seed + first)
  const levels = ['INFO ', 'INFO ', 'INFO ', 'DEBUG', 'WARN ', 'ERROR']
  const paths = ['/api/v1/items', '/api/v1/users', '/sync/push', '/sync/pull', '/health', '/static/app.js']
  const t0 = Date.UTC(2024, 4, 1)
  const lines: string[] = []
  let n = 0
  for (let i = first; n < bytes; i++) {
    const ts = new Date(t0 + i * 37).toISOString()
    const l = `${ts} ${r.pick(levels)} [worker-${r.int(8)}] req=${r.next().toString(16)} ${r.pick(paths)}/${r.int(10000)} status=${r.pick([200, 200, 200, 204, 304, 404, 500])} ms=${r.int(900)}\n`
    lines.push(l)
    n += l.length
  }
  return Buffer.from(lines.join(''), 'latin1')
}

/** `base` with `count` overwrites of `len` seeded bytes at seeded, distinct offsets. */
export function overwrite(base: Uint8Array, seed: number, count: number, len: number): Uint8Array {
  const out = Uint8Array.from(base)
  const r = new Rng(seed)
  for (let k = 0; k < count; k++) out.set(seededBytes(seed * 31 + k, len), r.int(base.length - len))
  return out
}

/** `base` with `bytes` seeded bytes inserted at `at`. */
export function insertAt(base: Uint8Array, seed: number, at: number, bytes: number): Uint8Array {
  return Buffer.concat([base.subarray(0, at), seededBytes(seed, bytes), base.subarray(at)])
}

/**
 * A target as long as `seed`, made of its pieces (32–512 KiB, in order) where 3 pieces in 5 are
 * kept and 2 in 5 replaced by the same length of `fresh` (new data of the same kind).
 */
export function mixSixtyForty(seed: Uint8Array, fresh: Uint8Array, rngSeed: number): Uint8Array {
  const r = new Rng(rngSeed)
  const out = new Uint8Array(seed.length)
  for (let p = 0, k = 0; p < seed.length; k++) {
    const n = Math.min(seed.length - p, 32 * 1024 + r.int(480 * 1024))
    out.set(k % 5 < 3 ? seed.subarray(p, p + n) : fresh.subarray(p, p + n), p)
    p += n
  }
  return out
}

/** Edits applied while streaming the big target: overwrites, one insertion, one deletion. */
export interface StreamEdit {
  readonly at: number
  readonly kind: 'overwrite' | 'insert' | 'delete'
  readonly len: number
}

/** `count` scattered edits over `bytes`, sorted, one of each kind per 8, at least 1 MiB apart. */
export function scatteredEdits(seed: number, bytes: number, count: number): StreamEdit[] {
  const r = new Rng(seed)
  const span = Math.floor(bytes / count)
  return Array.from({ length: count }, (_, k): StreamEdit => ({
    at: k * span + r.int(span - MiB),
    kind: k % 8 === 3 ? 'insert' : k % 8 === 6 ? 'delete' : 'overwrite',
    len: k % 8 === 3 || k % 8 === 6 ? 4096 : 64,
  }))
}

/**
 * Writes `bytes` of seeded data to `seedPath`, and to `targetPath` the same data with `edits`
 * applied, both in 64 MiB pieces: memory stays at a few pieces whatever `bytes`.
 */
export async function writeBigPair(seedPath: string, targetPath: string, bytes: number, edits: readonly StreamEdit[]): Promise<void> {
  const piece = 64 * MiB
  const seedFh = await open(seedPath, 'w')
  const targetFh = await open(targetPath, 'w')
  try {
    for (let off = 0, k = 0; off < bytes; off += piece, k++) {
      const data = seededBytes(7000 + k, Math.min(piece, bytes - off))
      await seedFh.write(data)
      const mine = edits.filter((e) => e.at >= off && e.at + e.len < off + data.length)
      let pos = 0
      const out = Buffer.from(data) // a copy: overwrites must not reach the seed
      for (const e of mine) {
        const at = e.at - off
        if (e.kind === 'overwrite') {
          out.set(seededBytes(e.at, e.len), at)
          continue
        }
        await targetFh.write(out.subarray(pos, at))
        if (e.kind === 'insert') {
          await targetFh.write(seededBytes(e.at, e.len))
          pos = at
        } else {
          pos = at + e.len
        }
      }
      await targetFh.write(out.subarray(pos))
    }
  } finally {
    await seedFh.close()
    await targetFh.close()
  }
}
