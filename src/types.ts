import type { Fingerprint, FileDigest } from './hash/index.js'

export type { Fingerprint, FileDigest }

/** One chunk of a file: where it is and what its content hashes to. Offsets and lengths in bytes. */
export interface Chunk {
  readonly offset: number
  readonly length: number
  readonly fp: Fingerprint
}

/** A whole file, chunked: its chunk list in order, total size and whole-file digest. */
export interface ChunkedFile {
  readonly size: number
  readonly digest: FileDigest
  readonly chunks: readonly Chunk[]
}
