import { unlink } from 'node:fs/promises'
import { join, posix } from 'node:path'
import { fsError } from './fs-error.js'
import { tempFileOwner } from './tree-entry.js'

/** True while a process with this id exists on this machine (EPERM: it exists, owned by
 *  another user). What tells a dead writer's leftovers (temp files, a tree lock) from a live one's. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Removes the temp files (relative paths under `root`, as the walk reports them) left by
 * writers that are gone: a process that no longer exists, or this process (the caller holds
 * the tree, so no other session of ours is writing in it). A temp file of another live process
 * — a second dsync writing this tree — is left alone. Returns how many were removed.
 */
export async function removeStaleTemps(root: string, paths: readonly string[]): Promise<number> {
  let removed = 0
  for (const rel of paths) {
    const owner = tempFileOwner(posix.basename(rel))
    if (owner === undefined || (owner !== process.pid && processAlive(owner))) continue
    try {
      await unlink(join(root, rel))
      removed++
    } catch (err) {
      // Policy: gone already (another cleaner, or the writer finished) is what we wanted.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw fsError(err, rel, 'remove this stale temp file')
    }
  }
  return removed
}
