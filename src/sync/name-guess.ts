/**
 * Guesses by name for a small file's earlier version, when its chunks found none (an edit
 * changes most of a small file's few chunks, and files under SKETCH_MIN_FILE_BYTES have no
 * sketch): as rsync's --fuzzy, a file of the same name elsewhere (a move), or a file in the same
 * folder whose name the new one holds whole, or the other way round (a rename: `notes.txt` →
 * `notes-v2.txt`, `report (1).txt` → `report.txt`).
 *
 * A wrong guess costs more than the file whole: a signature, and literals compressed a delta's
 * way. New dated logs beside older ones (30 files of ~25 KB, `app-2025-01-01.log` where
 * `app-2024-01-01.log` was) cost 207 KiB whole and 245 KiB when guessed by the longest run of
 * the name kept; a name held whole guesses none of them.
 */

import { posix } from 'node:path'

/** A file a guess may name. */
export interface NamedFile {
  readonly path: string
  readonly size: number
}

/**
 * Sizes a guess may differ by, as a factor: an edit that doubles a small file or halves it is
 * not the edit a delta is for.
 */
const MAX_SIZE_FACTOR = 2

/** Names shorter than this (without their extension) are not guessed from: `a.txt` is in too many names. */
const MIN_STEM_CHARS = 3

/** The name's extension, from its last dot ('' for none, nor for a dot file's leading dot). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(dot) : ''
}

/** Of `files` (of the same name elsewhere), the one a moved file of `size` bytes most likely
 *  was: the nearest in size, the first of equals. */
export function nearestInSize(size: number, files: Iterable<NamedFile>): NamedFile | undefined {
  let best: NamedFile | undefined
  for (const f of files) if (best === undefined || Math.abs(f.size - size) < Math.abs(best.size - size)) best = f
  return best
}

const sizeClose = (a: number, b: number): boolean => a <= b * MAX_SIZE_FACTOR && b <= a * MAX_SIZE_FACTOR

/**
 * Of `siblings` (files in the same folder as the target, named `name`, of `size` bytes), the one
 * most likely renamed to it: the same extension, a size within MAX_SIZE_FACTOR, and one stem (the
 * name without its extension) holding the other whole, the shorter of MIN_STEM_CHARS or more.
 * The fewest characters added or removed wins (`n006-v2` was `n006`, and never `n002`), then
 * the nearest size, then the first path. Undefined when none qualifies.
 */
export function similarlyNamed(name: string, size: number, siblings: Iterable<NamedFile>): NamedFile | undefined {
  const ext = extensionOf(name)
  const stem = name.slice(0, name.length - ext.length)
  let best: { f: NamedFile; added: number; gap: number } | undefined
  for (const f of siblings) {
    const other = posix.basename(f.path)
    if (other === name || extensionOf(other) !== ext || !sizeClose(f.size, size)) continue
    const otherStem = other.slice(0, other.length - ext.length)
    const [short, long] = otherStem.length <= stem.length ? [otherStem, stem] : [stem, otherStem]
    if (short.length < MIN_STEM_CHARS || !long.includes(short)) continue
    const added = long.length - short.length
    const gap = Math.abs(f.size - size)
    if (best === undefined || added < best.added || (added === best.added && (gap < best.gap || (gap === best.gap && f.path < best.f.path)))) {
      best = { f, added, gap }
    }
  }
  return best?.f
}
