/**
 * Guesses by name for a small file's earlier version, when its chunks found none (an edit
 * changes most of a small file's few chunks, and files under SKETCH_MIN_FILE_BYTES have no
 * sketch): as rsync's --fuzzy, a file of the same name elsewhere (a move), or a file in the same
 * folder with a similar name (a rename: `notes.txt` → `notes-v2.txt`). A wrong guess costs a
 * small signature and a delta of literals, about what the file costs whole.
 */

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

/**
 * A similar name keeps at least this much of the other's stem (the name without its extension)
 * in one piece, and at least MIN_KEPT_CHARS: `n000` → `n000-v2` keeps all 4, `notes` →
 * `old-notes` all 5, `report` → `report (1)` all 6.
 */
const MIN_KEPT_SHARE = 0.5
const MIN_KEPT_CHARS = 3

/** The name's extension, from its last dot ('' for none, nor for a dot file's leading dot). */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(dot) : ''
}

/** Two rows for the dynamic programs below, grown to the longest name seen (names are short:
 *  ≤ 255 bytes): a guess weighs hundreds of names, and new arrays per pair were ~40% of its time. */
let rowA = new Int32Array(256)
let rowB = new Int32Array(256)
function rows(n: number): void {
  if (rowA.length > n) return
  rowA = new Int32Array(n + 1)
  rowB = new Int32Array(n + 1)
}

/** Levenshtein distance between `a` and `b` (insertions, deletions and changes of one UTF-16
 *  unit cost 1), in two rows. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0
  rows(b.length)
  let prev = rowA
  let row = rowB
  for (let j = 0; j <= b.length; j++) prev[j] = j
  for (let i = 1; i <= a.length; i++) {
    row[0] = i
    const ca = a.charCodeAt(i - 1)
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (ca === b.charCodeAt(j - 1) ? 0 : 1))
    }
    ;[prev, row] = [row, prev]
  }
  return prev[b.length]!
}

/** Length of the longest common substring of `a` and `b` (contiguous in both). */
export function longestCommonRun(a: string, b: string): number {
  rows(b.length)
  let prev = rowA.fill(0, 0, b.length + 1)
  let row = rowB
  row[0] = 0
  let best = 0
  for (let i = 1; i <= a.length; i++) {
    const ca = a.charCodeAt(i - 1)
    for (let j = 1; j <= b.length; j++) {
      const n = ca === b.charCodeAt(j - 1) ? prev[j - 1]! + 1 : 0
      row[j] = n
      if (n > best) best = n
    }
    ;[prev, row] = [row, prev]
  }
  return best
}

const sizeClose = (a: number, b: number): boolean => a <= b * MAX_SIZE_FACTOR && b <= a * MAX_SIZE_FACTOR

/**
 * Of `siblings` (files in the same folder as the target, named `name`, of `size` bytes), the one
 * most likely renamed to it: the same extension, a size within MAX_SIZE_FACTOR, and the stems
 * sharing a run of at least MIN_KEPT_SHARE of the shorter one (MIN_KEPT_CHARS at least). The
 * longest run wins (`n006-v2` was `n006`, not `n002`, though both are 3 edits away), then the
 * fewest edits, the nearest size, the first path. Undefined when none qualifies.
 */
export function similarlyNamed(name: string, size: number, siblings: Iterable<NamedFile>): NamedFile | undefined {
  const ext = extensionOf(name)
  const stem = name.slice(0, name.length - ext.length)
  let best: { f: NamedFile; kept: number; distance: number; gap: number } | undefined
  for (const f of siblings) {
    const other = f.path.slice(f.path.lastIndexOf('/') + 1)
    if (other === name || extensionOf(other) !== ext || !sizeClose(f.size, size)) continue
    const otherStem = other.slice(0, other.length - ext.length)
    const kept = longestCommonRun(stem, otherStem)
    if (kept < MIN_KEPT_CHARS || kept < MIN_KEPT_SHARE * Math.min(stem.length, otherStem.length)) continue
    if (best !== undefined && kept < best.kept) continue
    const distance = editDistance(stem, otherStem)
    const gap = Math.abs(f.size - size)
    const better =
      best === undefined ||
      kept > best.kept ||
      distance < best.distance ||
      (distance === best.distance && (gap < best.gap || (gap === best.gap && f.path < best.f.path)))
    if (better) best = { f, kept, distance, gap }
  }
  return best?.f
}
