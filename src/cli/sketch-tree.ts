import { stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { chunkParams } from '../chunk/index.js'
import { DsyncError } from '../errors.js'
import { fsError, STATE_DIR_NAME } from '../fs/index.js'
import { Store, updateSketchIndex, type SketchIndex, type SketchScanResult } from '../store/index.js'
import type { CliContext } from './context.js'

/** A tree's similarity index, brought up to date (or not, with `scan: false`), open for queries. */
export interface OpenSketchTree {
  readonly root: string
  readonly index: SketchIndex
  readonly scan: SketchScanResult | undefined
  close(): Promise<void>
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true
}

/** The tree a file is in: the nearest folder above it with a `.dsync/` state folder, else its own folder. */
export async function treeOf(file: string): Promise<string> {
  for (let d = dirname(file); ; d = dirname(d)) {
    if (await isDir(join(d, STATE_DIR_NAME))) return d
    if (dirname(d) === d) return dirname(file)
  }
}

/** Opens `root`'s store (as sync does: default chunk params) and updates its similarity index. */
export async function openSketchTree(ctx: CliContext, root: string, opts: { scan: boolean }): Promise<OpenSketchTree> {
  const st = await stat(root).catch((err: unknown) => {
    throw fsError(err, root, 'read the folder')
  })
  if (!st.isDirectory()) throw new DsyncError('NOT_A_FILE', `${root}: not a directory; give the tree to search`, { path: root })
  const store = await Store.open(root, { params: chunkParams() })
  try {
    const index = store.sketchIndex()
    const onError = (err: DsyncError): void => void ctx.stderr.write(`dsync: ${err.message} (skipped)\n`)
    const scan = opts.scan ? await updateSketchIndex(root, index, { signal: ctx.signal, onError }) : undefined
    return { root, index, scan, close: () => store.close() }
  } catch (err) {
    await store.close()
    throw err
  }
}
