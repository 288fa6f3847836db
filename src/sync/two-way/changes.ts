import type { TreeEntry } from '../../fs/index.js'
import type { ChangeStatus, FileEntry, StateEntry } from '../../net/index.js'
import { sameMtime, type PairBase } from '../../store/index.js'
import type { FileDigest } from '../../types.js'

/** A version of a path, without the path: what a side has, or had at the last sync. */
export type Version = Omit<FileEntry, 'path'>

/**
 * Whether two versions of a path are the same for sync: the same kind, and for a file the same
 * content (digest when both are known, else size and mtime: rsync's quick check) and mode; for
 * a symlink the same target; a directory is the same directory whatever its times (its mode is
 * compared only with `mode`: two sides that both made a directory agree on it).
 */
export function sameVersion(a: Version, b: Version, o: { mode: boolean } = { mode: true }): boolean {
  if (a.kind !== b.kind) return false
  if (a.kind === 'symlink') return a.target === b.target
  if (o.mode && a.mode !== b.mode) return false
  if (a.kind === 'dir') return true
  if (a.digest !== undefined && b.digest !== undefined) return a.digest === b.digest
  return a.size === b.size && sameMtime(a.mtimeMs, b.mtimeMs)
}

/**
 * One side's tree against its pair bases with a peer: every path it has or had at the last
 * sync, with how it changed since (`same`, `changed`, `new`: no base; `deleted`: the base,
 * gone now). `digestOf` gives a file's digest when this side knows it without reading (a
 * current record): it makes "same" exact where size and mtime alone would not be.
 */
export function sideState(
  entries: Iterable<TreeEntry>,
  bases: ReadonlyMap<string, PairBase>,
  digestOf: (path: string) => FileDigest | undefined = () => undefined,
): StateEntry[] {
  const out: StateEntry[] = []
  const present = new Set<string>()
  for (const e of entries) {
    present.add(e.path)
    const digest = e.kind === 'file' ? digestOf(e.path) : undefined
    const entry: FileEntry = {
      path: e.path, kind: e.kind, size: e.size, mtimeMs: e.mtimeMs, mode: e.mode,
      ...(digest !== undefined && { digest }),
      ...(e.target !== undefined && { target: e.target }),
    }
    const base = bases.get(e.path)
    const status: ChangeStatus = base === undefined ? 'new' : sameVersion(entry, base) ? 'same' : 'changed'
    // An unchanged file's digest tells the peer nothing (32 incompressible bytes each: a no-op
    // of 20,000 files sent 704 KiB of state instead of ~50).
    if (status === 'same') delete entry.digest
    out.push({ ...entry, status })
  }
  for (const [path, b] of bases) {
    if (present.has(path)) continue
    out.push({
      path, kind: b.kind, size: b.size, mtimeMs: b.mtimeMs, mode: b.mode, status: 'deleted',
      ...(b.digest !== undefined && { digest: b.digest }),
      ...(b.target !== undefined && { target: b.target }),
    })
  }
  return out
}

/** The pair base a version becomes. */
export function baseOf(v: Version): PairBase {
  return {
    kind: v.kind, size: v.size, mtimeMs: v.mtimeMs, mode: v.mode,
    ...(v.digest !== undefined && { digest: v.digest }),
    ...(v.target !== undefined && { target: v.target }),
  }
}
