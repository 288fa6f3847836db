/** zstd frame magic number, little-endian on the wire (RFC 8878 §3.1.1). */
const ZSTD_MAGIC = 0xfd2fb528

/**
 * The content size a zstd frame header declares: a number, `'unknown'` when the writer left it
 * out (streaming writers may), or `'bad'` when `data` does not start with a zstd frame header.
 * Read before decoding so that no backend allocates by a size a hostile peer wrote.
 * Layout (RFC 8878 §3.1.1.1): magic(4) descriptor(1) [window(1)] [dictId(0|1|2|4)] [fcs(0|1|2|4|8)].
 */
export function frameContentSize(data: Uint8Array): number | 'unknown' | 'bad' {
  if (data.length < 5) return 'bad'
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  if (view.getUint32(0, true) !== ZSTD_MAGIC) return 'bad'
  const d = data[4]!
  const fcsFlag = d >> 6
  const singleSegment = (d >> 5) & 1
  if ((d >> 3) & 1) return 'bad' // reserved bit must be zero
  const dictIdBytes = [0, 1, 2, 4][d & 3]!
  const fcsBytes = fcsFlag === 0 ? singleSegment : [0, 2, 4, 8][fcsFlag]!
  const at = 5 + (singleSegment ? 0 : 1) + dictIdBytes
  if (data.length < at + fcsBytes) return 'bad'
  switch (fcsBytes) {
    case 0:
      return 'unknown'
    case 1:
      return view.getUint8(at)
    case 2:
      return view.getUint16(at, true) + 256 // the 2-byte field is stored less 256
    case 4:
      return view.getUint32(at, true)
    default: {
      const size = view.getBigUint64(at, true)
      return size > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(size)
    }
  }
}
