/** File-system edge: reading files as streams, path safety, walking trees, atomic writes. */
export { READ_BUFFER_BYTES, fsError, regularFileSize, openFileSource } from './file-source.js'
export { chunkPath } from './chunk-path.js'
export { STATE_DIR_NAME, TEMP_PREFIX, type TreeEntry, comparePaths } from './tree-entry.js'
export { MAX_PATH_BYTES, MAX_SEGMENT_BYTES, checkRelPath, resolveInside } from './safe-path.js'
export { IGNORE_FILE_NAME, IgnoreRules } from './ignore-rules.js'
export { type WalkOptions, walkTree } from './walk.js'
