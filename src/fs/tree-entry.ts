/** Name of dsync's state folder at the top of a synced root (the store lives there). Never synced. */
export const STATE_DIR_NAME = '.dsync'

/**
 * Prefix of dsync's own temp files (a file being rebuilt next to its target, then renamed).
 * The walk never reports them and no path from the wire may use it, so a peer cannot clobber
 * a transfer in flight.
 */
export const TEMP_PREFIX = '.dsync-tmp-'

/**
 * The process id a temp file name was made by (`.dsync-tmp-<pid>-…`), or undefined for a name
 * not of that form. A session removes the temp files of processes that are gone (and its own
 * process's, whose sessions on the tree have ended: a tree has one session at a time).
 */
export function tempFileOwner(name: string): number | undefined {
  const m = /^\.dsync-tmp-(\d{1,10})-/.exec(name)
  return m === null ? undefined : Number(m[1])
}

/** One entry of a tree, as the walk saw it. Paths are relative to the root, POSIX '/'. */
export interface TreeEntry {
  readonly path: string
  readonly kind: 'file' | 'dir' | 'symlink'
  /** Bytes: the file's size; 0 for a directory; the target's length for a symlink. */
  readonly size: number
  readonly mtimeMs: number
  /** Permission bits only (`st_mode & 0o7777`). */
  readonly mode: number
  /** Symlink target, exactly as stored in the link; never followed. */
  readonly target?: string
}

/** The relative parent of a relative path: '' for a top-level name. */
export function parentDir(path: string): string {
  const i = path.lastIndexOf('/')
  return i < 0 ? '' : path.slice(0, i)
}

/** Every directory `path` is in, from its parent up to the root (''). */
export function* ancestorDirs(path: string): Generator<string> {
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) yield path.slice(0, i)
  yield ''
}

/** True when a directory above `path` ('' the root included, not `path` itself) is in `dirs`. */
export function isUnder(path: string, dirs: ReadonlySet<string>): boolean {
  if (dirs.size === 0) return false
  for (let p = parentDir(path); ; p = parentDir(p)) {
    if (dirs.has(p)) return true
    if (p === '') return false
  }
}

/** Code point at `i` of `s`, with '/' ranked below everything (so a dir sorts before its contents). */
function rankAt(s: string, i: number): number {
  const c = s.codePointAt(i)!
  return c === 0x2f ? -1 : c
}

/**
 * The one order of paths in dsync: depth-first, siblings by the UTF-8 bytes of their names
 * (code point order, which is UTF-8 byte order), a directory right before its contents. This is
 * byte order with '/' ranked lowest: `a` < `a/x` < `a-b` (plain byte order would put `a-b`
 * between `a` and `a/x`). Both peers sort with it, so their file lists can be merged in one pass.
 */
export function comparePaths(a: string, b: string): number {
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const ca = rankAt(a, i)
    const cb = rankAt(b, j)
    if (ca !== cb) return ca < cb ? -1 : 1
    i += ca > 0xffff ? 2 : 1
    j += cb > 0xffff ? 2 : 1
  }
  return i < a.length ? 1 : j < b.length ? -1 : 0
}
