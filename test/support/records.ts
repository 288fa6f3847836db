import { chunkBytes, chunkParams, cutterFor, digestBytes, type ChunkParams } from '../../src/index.js'
import type { FileRecord } from '../../src/store/index.js'

/** Small chunks so test files of a few KiB have many chunks. */
export const TEST_PARAMS: ChunkParams = chunkParams({ avg: 256 })

/** A store record for `data` as if read from disk at `path` (no file needed). */
export function recordOf(path: string, data: Uint8Array, params: ChunkParams = TEST_PARAMS, meta: { mtimeMs?: number; mode?: number } = {}): FileRecord {
  return {
    path,
    size: data.length,
    mtimeMs: meta.mtimeMs ?? 1_700_000_000_000,
    mode: meta.mode ?? 0o644,
    digest: digestBytes(data),
    chunks: chunkBytes(data, cutterFor(params)),
  }
}
