/** Compression of literal bytes (delta literals and whole files). Pure: bytes in, bytes out. */
export { CODEC, type CodecId, type Frame, DEFAULT_LEVEL, hasZstd, zstdBackendName, compressFrame, decompressFrame, loadCodecs } from './codec.js'
export { type ZstdBackend, loadZstdBackends } from './zstd-backend.js'
export { frameContentSize } from './zstd-header.js'
export { looksIncompressible } from './incompressible.js'
