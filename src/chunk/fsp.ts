import type { ChunkParams } from './params.js'
import type { Cutter } from './cutter.js'

/** Fixed-size partition: every chunk is `avg` bytes but the last. An insertion shifts every
 *  later boundary, which is why CDC is the default; FSP is the baseline the seed compares to. */
export function fspCutter(params: ChunkParams): Cutter {
  const size = params.avg
  return {
    maxSize: size,
    cut(_buf: Uint8Array, start: number, end: number): number {
      return Math.min(size, end - start)
    },
  }
}
