/** Compression of literal bytes (delta literals and whole files). Pure: bytes in, bytes out. */
export { CODEC, type CodecId, type Frame, DEFAULT_LEVEL, hasZstd, compressFrame, decompressFrame } from './codec.js'
