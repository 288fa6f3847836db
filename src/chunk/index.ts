/** Chunking: CDC (FastCDC Gear), FSP, SBC; streaming in bounded memory. Pure. */
export {
  type ChunkParams,
  type CutterKind,
  type ChunkerKind,
  CHUNKER_KINDS,
  CHUNK_LIMITS,
  DEFAULT_AVG,
  DEFAULT_CHUNK_PARAMS,
  chunkParams,
} from './params.js'
export type { Cutter } from './cutter.js'
export { cdcCutter } from './cdc.js'
export { GEAR } from './gear-table.js'
export { fspCutter } from './fsp.js'
export { BlockTable } from './block-table.js'
export { sbcBaseChunks, sbcChunks } from './sbc.js'
export { type ChunkSpan, chunkStream, chunkFile, chunkList, chunkBytes } from './chunk-stream.js'

import type { ChunkParams } from './params.js'
import type { Cutter } from './cutter.js'
import { cdcCutter } from './cdc.js'
import { fspCutter } from './fsp.js'

/** The cutter for a set of params (CDC or FSP). */
export function cutterFor(params: ChunkParams): Cutter {
  return params.kind === 'fsp' ? fspCutter(params) : cdcCutter(params)
}
