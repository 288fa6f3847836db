/**
 * dsync as a library: the pure core (chunkers, fingerprints, similarity) and the file helpers
 * built on it. The CLI (`bin/dsync.js`) is a thin layer over these.
 */
export * from './types.js'
export { DsyncError, isDsyncError, type ErrorCode } from './errors.js'
export * from './chunk/index.js'
export * from './hash/index.js'
export * from './similarity/index.js'
export { chunkPath, openFileSource } from './fs/index.js'
