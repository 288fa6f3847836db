/**
 * The delta byte format, versions 1 and 2 (protocol/DELTA.md is the spec):
 *
 *   header   'd' 's' 'D'  version (1 or 2)  varint seedSize
 *   records  FRAME  0x03 codec varint rawLength varint storedLength bytes[storedLength]
 *            COPY   0x01 zigzag-varint (seedOffset − end of previous COPY) varint length
 *            LIT    0x02 varint length                (the next bytes of the current frame)
 *   trailer  END    0x00 varint targetSize  bytes[32] SHA-256 of the target (version 1)
 *                                           bytes[16] XXH3-128 of the target (version 2)
 *
 * The target is the COPY and LIT records' bytes in order. Literal bytes travel in FRAMEs that
 * come before the LITs that use them; a FRAME may start only when the previous one has been used
 * up, and END only when the last one has.
 */
export const DELTA_MAGIC = Object.freeze([0x64, 0x73, 0x44])
export const DELTA_VERSION = 1
/** The same records, the target checked with XXH3-128 (src/hash/stream-check.ts): a file sent
 *  whole whose SHA-256 neither side needs yet (PROTOCOL.md §4.11). */
export const DELTA_VERSION_FAST_CHECK = 2

export const OP = Object.freeze({ END: 0x00, COPY: 0x01, LIT: 0x02, FRAME: 0x03 })

/**
 * Most raw bytes in one literal frame (reader's limit: it holds one frame decoded in memory).
 * The writer fills frames to LITERAL_FRAME_BYTES. Measured, zstd level 3, 16 MiB of server log
 * cut in frames of 256 KiB / 1 MiB / 4 MiB / 16 MiB: 2.68 / 2.43 / 2.50 / 2.52 MB; 1.3 MB of
 * source-like text: 263 / 261 / 260 KB. 1 MiB is as good as one frame for everything.
 */
export const MAX_FRAME_RAW = 4 * 1024 * 1024
export const LITERAL_FRAME_BYTES = 1024 * 1024

/** Most stored bytes of one frame: raw plus zstd's worst-case expansion, rounded up. */
export const MAX_FRAME_STORED = MAX_FRAME_RAW + 64 * 1024

/** Bytes of the SHA-256 in the trailer. */
export const DIGEST_BYTES = 32
