import { rm, rmdir } from 'node:fs/promises'
import { asFileError, isUnder, resolveInside, walkTree, type TreeEntry } from '../fs/index.js'
import type { SessionOptions } from '../net/index.js'
import { isBase, type Store } from '../store/index.js'
import { isConflictCopy } from './conflict.js'
import type { LocalFiles } from './local-files.js'
import type { FileEvent } from './report.js'

/** What --delete works on: the receiver's tree and view of it, and how to report. */
export interface DeleteContext {
  readonly root: string
  readonly store: Store
  readonly options: SessionOptions
  readonly signal: AbortSignal
  /** the receiver's tree: deleted entries are removed from it (and its folders from its known ones) */
  readonly files: LocalFiles
  /** whether the sender listed `path` (or a directory summary stood for it) */
  listed(path: string): boolean
  /** paths the sender could not read: they and what is under them are not extras */
  readonly unread: ReadonlySet<string>
  event(e: FileEvent): void
  /** a per-file failure: reported, the rest goes on */
  fail(path: string, err: unknown): void
}

/**
 * Why an extra file (one the sender does not have) must not be deleted, if so. --delete means
 * "the sender deleted it": true only of a file that is, unchanged, what was last synced here.
 * A file changed since, one never synced (created on this side), or a conflict copy (this
 * side's own version of a past conflict) is kept and reported, unless --force.
 */
export async function keepReason(e: TreeEntry, files: LocalFiles, store: Store, force: boolean): Promise<string | undefined> {
  if (force || e.kind !== 'file') return undefined
  if (isConflictCopy(e.path)) return "a conflict copy (this side's version of a past conflict)"
  const base = store.getBase(e.path)
  if (base === undefined) return 'never synced from the sender (created on the receiver)'
  // By content when the base has a digest (the file is read if need be), else by size and mtime.
  const digest = base.digest === undefined ? undefined : (await files.record(e.path))?.digest
  if (!isBase({ size: e.size, mtimeMs: e.mtimeMs, ...(digest !== undefined && { digest }) }, base)) return 'changed on the receiver since the last sync'
  return undefined
}

/** Extra files removed at once (deleteExtras). */
const DELETE_AT_ONCE = 32

/** --delete: removes what the sender does not have, deepest first; never what would lose work
 *  (keepReason: reported as kept). Run after the transfers: a file about to go may have been
 *  the seed of a renamed one. */
export async function deleteExtras(c: DeleteContext): Promise<void> {
  // A directory the sender could not read was listed with nothing in it: its files here are
  // not extras (they were deleted when they still matched their base).
  const unread = (path: string): boolean => c.unread.has(path) || isUnder(path, c.unread)
  const unlisted: TreeEntry[] = []
  for (const e of c.files.entries()) if (!c.listed(e.path) && !unread(e.path)) unlisted.push(e)
  // Nothing unlisted (a no-op): no second walk of the tree (0.5 s of a no-op of 100,000 files).
  if (unlisted.length === 0) return
  // What the ignore rules exclude is never deleted, and the rules that count are the ones in
  // the tree now: a .dsyncignore the sender just wrote applies to files already here.
  // Policy for entries the walk cannot read: not visible, so not deleted.
  const visible = new Set<string>()
  for await (const e of walkTree(c.root, { exclude: c.options.exclude, signal: c.signal, onError: () => undefined })) visible.add(e.path)
  const extras = unlisted.filter((e) => visible.has(e.path)).sort((a, b) => (a.path < b.path ? 1 : -1))
  /** Removes one extra; returns what to report, so reports keep the extras' order. */
  const remove = async (e: TreeEntry): Promise<() => void> => {
    try {
      const why = await keepReason(e, c.files, c.store, c.options.force)
      if (why !== undefined) {
        return () => c.event({ path: e.path, action: 'kept', code: 'CHANGED_ON_RECEIVER', message: `${e.path}: ${why}; not deleted (use --force to delete it)` })
      }
      if (!c.options.dryRun) {
        const abs = await resolveInside(c.root, e.path, { allowFinalSymlink: true })
        if (e.kind === 'dir') {
          try {
            await rmdir(abs)
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOTEMPTY') return () => undefined // holds kept files
            throw err
          }
        } else await rm(abs, { force: true })
        // The files removed at once are forgotten by the store in one commit (each awaited alone
        // was a commit of its own, two fdatasyncs: 2 ms a file, 0.39 s of 200 deletions).
        if (e.kind === 'file') await Promise.all([c.store.delete(e.path), c.store.deleteBase(e.path)])
      }
      return () => {
        c.files.delete(e.path)
        c.files.dirs.delete(e.path) // no longer known to be a real directory
        c.event({ path: e.path, action: 'deleted' })
      }
    } catch (err) {
      return () => c.fail(e.path, asFileError(err, e.path, 'delete it'))
    }
  }
  // Files (and links) DELETE_AT_ONCE at a time: one after the other, each a few round trips
  // through the thread pool (its path checked, then removed), 200 took ~0.2 s. Then the
  // directories, deepest first, once what was in them is gone.
  const leaves = extras.filter((e) => e.kind !== 'dir')
  for (let i = 0; i < leaves.length; i += DELETE_AT_ONCE) {
    for (const report of await Promise.all(leaves.slice(i, i + DELETE_AT_ONCE).map(remove))) report()
  }
  for (const e of extras) if (e.kind === 'dir') (await remove(e))()
}
