/** Each root's state: file records, last-synced digests (bases), and the content index
 *  (sampled fingerprints and whole-file digests → files), in lmdb under `<root>/.dsync/`. */
export { Store, STORE_FILE_NAME } from './state-store.js'
export type { FileRecord, StoredRecord } from './record-codec.js'
export type { Candidate } from './candidates.js'
export { SAMPLE_MODULUS, MIN_HASHES, sampleFingerprints, sampleChunks } from './sampling.js'
export { MAX_POSTINGS } from './content-index.js'
export { type ScannedEntry, type ScanResult, scanTree } from './scan.js'
export { readRecord, type ReadResult } from './read-record.js'
export type { RecordMeta } from './record-codec.js'
export { isBase, sameMtime, type FileVersion, type SyncBase } from './sync-base.js'
