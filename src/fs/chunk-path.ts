import { chunkFile, cutterFor, type ChunkParams } from '../chunk/index.js'
import type { ChunkedFile } from '../types.js'
import { openFileSource } from './file-source.js'

/** Chunks, fingerprints and digests the regular file at `path`, streaming (bounded memory).
 *  `noFollow`: refuse a symlink at `path` (see openRegular). */
export async function chunkPath(
  path: string,
  params: ChunkParams,
  opts: { signal?: AbortSignal; noFollow?: boolean } = {},
): Promise<ChunkedFile> {
  return chunkFile(openFileSource(path, opts), cutterFor(params), opts.signal ? { signal: opts.signal } : {})
}
