import { chunkFile, cutterFor, type ChunkParams } from '../chunk/index.js'
import type { ChunkedFile } from '../types.js'
import { openFileSource, regularFileSize } from './file-source.js'

/** Chunks, fingerprints and digests the regular file at `path`, streaming (bounded memory). */
export async function chunkPath(path: string, params: ChunkParams, opts: { signal?: AbortSignal } = {}): Promise<ChunkedFile> {
  await regularFileSize(path)
  return chunkFile(openFileSource(path, opts), cutterFor(params), opts)
}
