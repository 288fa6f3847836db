/** Each root's state: file records, last-synced digests (bases), and the content index
 *  (sampled fingerprints and whole-file digests → files), in lmdb under `<root>/.dsync/`. */
export { Store, STORE_FILE_NAME } from './state-store.js'
export type { FileRecord, StoredRecord } from './record-codec.js'
export type { Candidate } from './candidates.js'
export { SAMPLE_MODULUS, MIN_HASHES, passesSample, sampleFingerprints, sampleChunks, probeFingerprints } from './sampling.js'
export { MAX_POSTINGS } from './content-index.js'
export { readRecord, type ReadResult } from './read-record.js'
export { isBase, sameMtime, type FileVersion, type SyncBase } from './sync-base.js'
export { SketchIndex, POSTED_MIN, POSTED_BYTES, MAX_SKETCH_POSTINGS, INDEX_ANCHORS, INDEX_DENSE_LEVEL, indexedSketch, probeAnchorKeys, probeAnchorFinder, type IndexedSketch } from './sketch-index.js'
export { type SketchScanResult, updateSketchIndex } from './sketch-scan.js'
export { type SimilarFile, findSimilar, metricOf } from './similar-files.js'
export { type SimilarPair, type SimilarGroup, groupSimilar } from './similar-groups.js'
export { PairBases, newReplicaId, type PairBase } from './pair-bases.js'
