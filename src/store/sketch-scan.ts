import { join } from 'node:path'
import { isDsyncError, type DsyncError } from '../errors.js'
import { sketchPath, walkTree } from '../fs/index.js'
import type { SketchScanResult } from '../types.js'
import type { SketchIndex } from './sketch-index.js'

export type { SketchScanResult }

/** Files sketched per index transaction: one commit per batch, not per file. */
const BATCH = 256

/**
 * Brings the similarity index of `root` up to date: files whose size and mtime match their entry
 * are not read (the quick check sync uses), new and changed ones are sketched, vanished ones
 * forgotten. Per-file failures go to `onError` (the file is left out) or are thrown.
 */
export async function updateSketchIndex(
  root: string,
  index: SketchIndex,
  opts: { signal?: AbortSignal; onError?: (err: DsyncError) => void } = {},
): Promise<SketchScanResult> {
  const known = new Set(index.paths())
  let files = 0
  let filesRead = 0
  let bytesRead = 0
  let batch: Parameters<SketchIndex['putMany']>[0][number][] = []
  const walkOpts = { ...(opts.signal && { signal: opts.signal }), ...(opts.onError && { onError: opts.onError }) }
  for await (const e of walkTree(root, walkOpts)) {
    if (e.kind !== 'file') continue
    files++
    known.delete(e.path)
    const old = index.lookup(e.path)
    if (old !== undefined && old.size === e.size && old.mtimeMs === e.mtimeMs) continue
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
