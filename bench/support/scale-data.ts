/**
 * The data of bench/sync.ts's scale part (issue 8, "speed at scale"): trees of many small text
 * files and single large incompressible files, written straight to disk (holding a GiB in a
 * Map, as sync-data.ts does for its small classes, would make the bench its own memory hog).
 * Seeded: every run and machine writes the same bytes.
 */
import { createCipheriv, createHash } from 'node:crypto'
import { mkdir, open, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { MiB, xorshift32 } from './data.js'
import { BEFORE_TIME, seededText } from './sync-data.js'

/** Smallest and largest small file (log-uniform in between: mean ~1.8 KiB). */
const SMALL_MIN = 100
const SMALL_MAX = 8192
/** Files written at once: one at a time, 100,000 files took minutes of mostly waiting. */
const WRITE_JOBS = 16

/**
 * `n` text files of 100 B–8 KiB in about n / 100 folders (1,000 for 100,000 files), all with
 * the same fixed mtime. Sizes are log-uniform, as many tiny files as large ones, as in a source
 * tree or a mail folder. Content is seeded text per file, so no two files share chunks.
 */
export async function writeSmallFiles(root: string, n: number, seed: number): Promise<void> {
  const rnd = xorshift32(seed)
  const folders = Math.max(1, Math.round(n / 100))
  const files = Array.from({ length: n }, (_, i) => {
    const folder = i % folders
    const size = Math.round(SMALL_MIN * (SMALL_MAX / SMALL_MIN) ** (rnd() / 2 ** 32))
    return { path: `g${folder % 10}/d${String(folder).padStart(4, '0')}/f${String(i).padStart(6, '0')}.txt`, size }
  })
  for (let f = 0; f < folders; f++) await mkdir(join(root, `g${f % 10}/d${String(f).padStart(4, '0')}`), { recursive: true })
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++
      const file = join(root, files[i]!.path)
      await writeFile(file, seededText(seed * 1_000_003 + i, files[i]!.size))
      await utimes(file, BEFORE_TIME, BEFORE_TIME)
    }
  }
  await Promise.all(Array.from({ length: WRITE_JOBS }, worker))
}

/**
 * A keystream of AES-256-CTR keyed by the seed: incompressible and without repeats at any size
 * (a 1 GiB run of xorshift32, the benches' usual source, is a sixteenth of its whole cycle, and
 * pieces seeded apart can overlap, which chunk deduplication would turn into a false win).
 */
function keystream(seed: number, label: string): (n: number) => Buffer {
  const key = createHash('sha256').update(`dsync bench ${label} ${seed}`).digest()
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16))
  return (n) => cipher.update(Buffer.alloc(n))
}

/** A file of `size` incompressible seeded bytes, written 4 MiB at a time, mtime fixed. */
export async function writeRandomFile(path: string, size: number, seed: number): Promise<void> {
  const next = keystream(seed, 'file')
  const f = await open(path, 'w')
  try {
    for (let pos = 0; pos < size; pos += 4 * MiB) await f.write(next(Math.min(4 * MiB, size - pos)))
  } finally {
    await f.close()
  }
  await utimes(path, BEFORE_TIME, BEFORE_TIME)
}

/**
 * Overwrites `count` pieces of `len` bytes in place at seeded offsets (same size, same inode, as
 * a database or disk image changes) and sets a later mtime, `step` days after the first, so
 * that size + mtime quick checks see the change.
 */
export async function overwriteScattered(path: string, count: number, len: number, seed: number, step: number): Promise<void> {
  const rnd = xorshift32(seed)
  const next = keystream(seed, 'overwrite')
  const f = await open(path, 'r+')
  try {
    const { size } = await f.stat()
    // Two draws per offset: one 32-bit draw cannot reach past 4 GiB.
    for (let k = 0; k < count; k++) await f.write(next(len), 0, len, ((rnd() * 2 ** 32 + rnd()) % (size - len)))
  } finally {
    await f.close()
  }
  const t = BEFORE_TIME + step * 86_400
  await utimes(path, t, t)
}
