import { lstatSync } from 'node:fs'
import { join } from 'node:path'
import { DsyncError } from '../errors.js'
import { fsError } from './fs-error.js'
import { STATE_DIR_NAME, TEMP_PREFIX } from './tree-entry.js'

/** Longest path segment in bytes (NAME_MAX on Linux, macOS and Windows filesystems). */
export const MAX_SEGMENT_BYTES = 255
/** Longest relative path in bytes (PATH_MAX on Linux). */
export const MAX_PATH_BYTES = 4096

function unsafe(rel: string, why: string): DsyncError {
  // JSON.stringify shows NULs, control characters and trailing spaces for what they are.
  const shown = rel.length > 200 ? `${JSON.stringify(rel.slice(0, 200))}…` : JSON.stringify(rel)
  return new DsyncError('UNSAFE_PATH', `unsafe path ${shown}: ${why}; refused`, { path: rel })
}

/**
 * Validates a relative path from the wire or the user: POSIX '/', not empty, not absolute, no '.'
 * or '..' segments, no empty segments, no NUL, no backslash, segment ≤ 255 bytes, total ≤ 4096
 * bytes. Also refuses dsync's own names (a `.dsync` state folder at any depth, `.dsync-tmp-*`
 * temp files), so a peer can neither overwrite a store nor a transfer in flight.
 * Returns `rel` unchanged; throws DsyncError('UNSAFE_PATH', message naming the path and why).
 */
export function checkRelPath(rel: string): string {
  if (typeof rel !== 'string' || rel.length === 0) throw unsafe(String(rel), 'empty path')
  checkCharacters(rel, rel)
  if (rel.startsWith('/')) throw unsafe(rel, 'absolute path (must be relative to the root)')
  checkLength(rel)
  for (const seg of rel.split('/')) checkSegment(rel, seg)
  return rel
}

/**
 * checkRelPath for `rel`, which is `name` under a directory path already checked (`rel` ends with
 * '/' + `name`, or is `name` at the root): only the new name and the whole length can be wrong.
 * The walk checks each entry so; checking every path whole, segment by segment, was ~10 ms of a
 * 20,000-file no-op's ~490 CPU ms on each side.
 */
export function checkChildPath(rel: string, name: string): string {
  checkCharacters(rel, name)
  if (name.includes('/')) throw unsafe(rel, "a name with a '/' in it")
  checkLength(rel)
  checkSegment(rel, name)
  return rel
}

/** No NUL and no backslash in `text` (the path `rel`, or its last name). */
function checkCharacters(rel: string, text: string): void {
  if (text.includes('\0')) throw unsafe(rel, 'contains a NUL byte')
  if (text.includes('\\')) throw unsafe(rel, "contains a backslash (paths use '/')")
}

function checkLength(rel: string): void {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most paths need no count.
  if (rel.length * 3 > MAX_PATH_BYTES && Buffer.byteLength(rel) > MAX_PATH_BYTES) throw unsafe(rel, `longer than ${MAX_PATH_BYTES} bytes`)
}

function checkSegment(rel: string, seg: string): void {
  if (seg === '') throw unsafe(rel, "empty segment ('//' or a trailing '/')")
  if (seg === '.' || seg === '..') throw unsafe(rel, `'${seg}' segment`)
  if (seg.length * 3 > MAX_SEGMENT_BYTES && Buffer.byteLength(seg) > MAX_SEGMENT_BYTES) throw unsafe(rel, `a name longer than ${MAX_SEGMENT_BYTES} bytes`)
  if (seg.startsWith(TEMP_PREFIX)) throw unsafe(rel, `'${TEMP_PREFIX}*' names are dsync's temp files`)
  // At any depth: a subdir served on its own keeps its state there too.
  if (seg === STATE_DIR_NAME) throw unsafe(rel, `'${STATE_DIR_NAME}' is dsync's state folder`)
}

function lstatOrUndefined(abs: string, rel: string) {
  try {
    return lstatSync(abs)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw fsError(err, rel, 'check it')
  }
}

/**
 * root + rel → absolute path, after checkRelPath, refusing (UNSAFE_PATH) when any EXISTING parent
 * component of it under root is a symlink or not a directory (so writes can never follow a symlink
 * out of the root). The last component may be a symlink only if `allowFinalSymlink`.
 *
 * Components that do not exist yet are fine (the caller creates them as real directories). The
 * root itself is trusted: the user named it. What lies between this check and the caller's write
 * is the caller's to keep: dsync writes a temp file in the checked directory and renames it, and
 * rename never follows a symlink in its last component.
 *
 * The lstats are synchronous: a few microseconds each from the dentry cache, where one through
 * libuv's thread pool cost the caller's main thread ~60 µs here (the sender's check of every file
 * it read was 14% of its CPU on 500 edited files, ~0.6 ms a file).
 */
export async function resolveInside(root: string, rel: string, opts: { allowFinalSymlink?: boolean } = {}): Promise<string> {
  checkRelPath(rel)
  checkParents(root, rel, opts)
  return join(root, rel)
}

/**
 * resolveInside's check of `rel` (checked already); returns how many of its parents were
 * found to be real directories (all of them, unless one does not exist yet).
 */
function checkParents(root: string, rel: string, opts: { allowFinalSymlink?: boolean }): number {
  const segments = rel.split('/')
  let abs = root
  for (let i = 0; i < segments.length; i++) {
    abs = join(abs, segments[i]!)
    const st = lstatOrUndefined(abs, rel)
    if (st === undefined) return i
    const last = i === segments.length - 1
    const here = segments.slice(0, i + 1).join('/')
    if (st.isSymbolicLink() && !(last && opts.allowFinalSymlink)) {
      throw unsafe(rel, last ? `'${here}' is a symlink and would be followed` : `its parent '${here}' is a symlink`)
    }
    if (!last && !st.isDirectory()) throw unsafe(rel, `its parent '${here}' is not a directory`)
  }
  return segments.length - 1
}

/**
 * The folders under a root known to be real directories in one session (relative; '' the root):
 * found so by the checks of `abs`, or noted by the caller (`add`: a folder it made, or its walk
 * found). A path in a known folder is not checked again: on 5,000 paths four folders deep,
 * resolveInside took ~18 µs each here. A folder swapped for a symlink once known is the
 * session's to prevent (the receiver writes its tree's structure alone); the last component is
 * every open's O_NOFOLLOW.
 */
export class CheckedDirs {
  readonly #known = new Set<string>([''])

  constructor(readonly root: string) {}

  has(dir: string): boolean {
    return this.#known.has(dir)
  }

  add(dir: string): void {
    this.#known.add(dir)
  }

  /** Forgets `dir` (removed, or no longer known to be a directory). */
  delete(dir: string): void {
    this.#known.delete(dir)
  }

  /** root + rel, refused (UNSAFE_PATH) as resolveInside refuses, its folders checked once
   *  (in a known folder, the last component is not looked at: every open of it is O_NOFOLLOW,
   *  and a rename never follows it). */
  abs(rel: string, opts: { allowFinalSymlink?: boolean } = {}): string {
    checkRelPath(rel)
    const cut = rel.lastIndexOf('/')
    const parent = cut < 0 ? '' : rel.slice(0, cut)
    if (!this.#known.has(parent)) {
      const dirs = checkParents(this.root, rel, opts)
      for (let i = 0, at = rel.indexOf('/'); i < dirs && at >= 0; i++, at = rel.indexOf('/', at + 1)) this.#known.add(rel.slice(0, at))
    }
    return join(this.root, rel)
  }
}
