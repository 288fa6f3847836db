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

/** One file found similar to a query (`dsync similar`), with every metric of it against the query. */
export interface SimilarFile {
  readonly path: string
  readonly size: number
  readonly jaccard: number
  readonly dice: number
  readonly lcs: number
  /** share of the query's bytes this file holds (this file as seed, the query as target) */
  readonly containment: number
  /** share of this file's bytes the query holds */
  readonly containedIn: number
  readonly errorBound: number
}

/** Two files similar at or above the threshold. */
export interface SimilarPair {
  readonly a: string
  readonly b: string
  readonly similarity: number
}

/** sif's Figure 3 (`dsync groups`): files joined by similar pairs, each given against the group's reference. */
export interface SimilarGroup {
  /** the file with the most similar pairs in the group (the largest on a tie) */
  readonly reference: string
  /** every file, the reference first, with its similarity to the reference (1 for itself) */
  readonly files: readonly { readonly path: string; readonly size: number; readonly similarity: number }[]
  readonly pairs: readonly SimilarPair[]
}

/** What bringing a tree's similarity index up to date did. */
export interface SketchScanResult {
  readonly files: number
  /** files sketched (new or changed by size or mtime) */
  readonly filesRead: number
  readonly bytesRead: number
  readonly removed: number
}
