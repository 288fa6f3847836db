import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fsError, STATE_DIR_NAME } from '../fs/index.js'
import { Store } from '../store/index.js'
import { ensureDirectory, SYNC_CHUNK_PARAMS, withStore } from './session.js'

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw fsError(err, path, 'open it')
  }
}

/**
 * Opens the local tree of a client session, and its store, for the length of `fn`. `create`:
 * the directory is made when missing (a pull's destination).
 *
 * A dry run creates nothing on this side. A missing destination is stood in for by an empty
 * temp directory (the plan is then "everything is new", which is what a real run would do), and
 * a tree without a state folder gets a throwaway store in a temp directory (the scan then reads
 * every file, as a first sync does). A tree that has a state folder uses it: the scan refreshes
 * its cache of file records, which changes no file and no sync base. `opened`: that store,
 * opened already by the caller (who closes it).
 */
export async function withLocalTree<T>(
  dir: string,
  o: { create: boolean; dryRun: boolean; opened?: Store | undefined },
  fn: (root: string, store: Store) => Promise<T>,
): Promise<T> {
  const own = (): Promise<T> => (o.opened !== undefined ? fn(dir, o.opened) : withStore(dir, (store) => fn(dir, store)))
  if (!o.dryRun) {
    await ensureDirectory(dir, o.create)
    return own()
  }
  const missing = o.create && !(await exists(dir))
  if (!missing) await ensureDirectory(dir, false)
  if (!missing && (o.opened !== undefined || (await exists(join(dir, STATE_DIR_NAME))))) return own()
  const scratch = await mkdtemp(join(tmpdir(), 'dsync-dry-run-'))
  try {
    const root = missing ? join(scratch, 'empty') : dir
    if (missing) await ensureDirectory(root, true)
    const store = await Store.open(scratch, { params: SYNC_CHUNK_PARAMS })
    try {
      return await fn(root, store)
    } finally {
      await store.close()
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}
