import { posix } from 'node:path'
import { isBase, type FileVersion, type SyncBase } from '../store/index.js'

/** What the receiver does with an incoming version of a file it already has, different. */
export type OverwriteVerdict =
  | 'write' // the receiver's copy is what was last synced (or older, when never synced): replace it
  | 'kept' // only the receiver changed it since the last sync: keep it, the sender's is older
  | 'conflict' // both changed: keep the receiver's as a conflict copy, then write the sender's

/**
 * The changed-on-receiver rule (DESIGN.md "What must always hold"). `base` is the digest this
 * receiver last synced for the path. With a base, the receiver's change is a fact: if the sender
 * still has the base, the receiver's version is the newer one and is kept; if both moved on, it
 * is a conflict. Without a base (never synced here), the newer mtime wins, and the receiver's
 * newer copy is never lost: it becomes a conflict copy. `force` always writes.
 */
export function checkOverwrite(f: {
  readonly current: FileVersion
  readonly incoming: FileVersion
  readonly base: SyncBase | undefined
  readonly force: boolean
}): OverwriteVerdict {
  if (f.force) return 'write'
  if (f.base === undefined) return f.current.mtimeMs > f.incoming.mtimeMs ? 'conflict' : 'write'
  if (isBase(f.current, f.base)) return 'write'
  return isBase(f.incoming, f.base) ? 'kept' : 'conflict'
}

/**
 * The name a conflict copy gets, beside the file: `notes/plan.dsync-conflict-20261121-143000.txt`,
 * or with the machine whose version it holds (two-way sync: both sides end with both
 * versions, so the name says whose it is): `notes/plan.dsync-conflict-home-20261121-143000.txt`.
 */
export function conflictCopyPath(path: string, now: Date, machine?: string): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  const ext = posix.extname(path) // '' for "Makefile" and ".bashrc"
  const who = machine === undefined ? '' : `${machineName(machine)}-`
  return `${path.slice(0, path.length - ext.length)}.dsync-conflict-${who}${stamp}${ext}`
}

/** A host name as it may appear in a file name and on the wire: `[A-Za-z0-9_.-]{1,64}`. */
export function machineName(host: string): string {
  const name = host.replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^\.+/, '').slice(0, 64)
  return name === '' ? 'unknown' : name
}

/** True for a name `conflictCopyPath` makes: a side's own kept version of a file. */
export function isConflictCopy(path: string): boolean {
  return /\.dsync-conflict-([A-Za-z0-9_.-]+-)?\d{8}-\d{6}(-\d+)?(\.[^/]*)?$/.test(path)
}
