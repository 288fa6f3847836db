import { join } from 'node:path'
import { DsyncError, isDsyncError } from '../errors.js'
import { sketchPath, walkTree, type TreeEntry } from '../fs/index.js'
import type { SketchScanResult } from '../types.js'
import type { SketchIndex } from './sketch-index.js'

export type { SketchScanResult }

/** Files sketched per index transaction: one commit per batch, not per file. */
const BATCH = 256

/**
 * Brings the similarity index of `root` up to date: files whose size and mtime match their entry
 * are not read (the quick check sync uses), new and changed ones are sketched, vanished ones
 * forgotten. Per-file failures go to `onError` (the file is left out) or are thrown.
 *
 * `entries`: the tree as the caller has listed it (a session's walk), instead of walking it
 * again. `minSize`: files smaller than this are not read; the entry of one that changed is
 * dropped, that of one that did not is kept (a session looks for seeds of large files only,
 * and `dsync similar --scan` indexes the small ones). A receiver of 100,000 small files took
 * 77 s to answer its first probe, reading and sketching every one of them (a walk of them all
 * cost ~2 s of every later session that probed).
 */
export async function updateSketchIndex(
  root: string,
  index: SketchIndex,
  opts: { signal?: AbortSignal; onError?: (err: DsyncError) => void; entries?: Iterable<TreeEntry>; minSize?: number } = {},
): Promise<SketchScanResult> {
  const known = new Set(index.paths())
  const minSize = opts.minSize ?? 0
  let files = 0
  let filesRead = 0
  let bytesRead = 0
  let batch: Parameters<SketchIndex['putMany']>[0][number][] = []
  const walkOpts = { ...(opts.signal && { signal: opts.signal }), ...(opts.onError && { onError: opts.onError }) }
  for await (const e of opts.entries ?? walkTree(root, walkOpts)) {
    if (e.kind !== 'file') continue
    files++
    const small = e.size < minSize
    const old = small && !known.has(e.path) ? undefined : index.lookup(e.path)
    if (old !== undefined && old.size === e.size && old.mtimeMs === e.mtimeMs) {
      known.delete(e.path)
      continue
    }
    // Not read: a changed small file's entry stays in `known`, and goes with the vanished ones.
    if (small) continue
    known.delete(e.path)
    // A walk stops so by itself; a listing given does not.
    if (opts.signal?.aborted) throw new DsyncError('ABORTED', `${root}: updating the similarity index cancelled`, { path: root })
    try {
      const sketch = await sketchPath(join(root, e.path), { noFollow: true, ...(opts.signal && { signal: opts.signal }) })
      batch.push({ path: e.path, size: e.size, mtimeMs: e.mtimeMs, sketch })
      filesRead++
      bytesRead += sketch.size
    } catch (err) {
      if (opts.onError === undefined || !isDsyncError(err)) throw err
      opts.onError(err)
    }
    if (batch.length >= BATCH) {
      await index.putMany(batch)
      batch = []
    }
  }
  if (batch.length > 0) await index.putMany(batch)
  if (known.size > 0) await index.removeMany([...known])
  return { files, filesRead, bytesRead, removed: known.size }
}
