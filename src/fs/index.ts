/** File-system edge: reading files as streams, path safety, walking trees, atomic writes. */
export { READ_BUFFER_BYTES, fsError, regularFileSize, openFileSource } from './file-source.js'
export { chunkPath } from './chunk-path.js'
