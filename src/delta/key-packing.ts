/** Bytes that `count` blocks of `weakBits + strongBits` bits each pack into. */
export function packedKeyBytes(count: number, weakBits: number, strongBits: number): number {
  return Math.ceil((count * (weakBits + strongBits)) / 8)
}

/** Each block's weak then strong key, most significant bit first, no padding between blocks
 *  (protocol/DELTA.md, "keys"): the key section of a signature and of a refinement signature. */
export function packKeys(weak: Uint32Array, strong: Uint32Array, weakBits: number, strongBits: number): Uint8Array {
  const n = weak.length
  const packed = new Uint8Array(packedKeyBytes(n, weakBits, strongBits))
  let at = 0
  let cur = 0
  let used = 0 // bits filled in `cur`
  const put = (v: number, bits: number): void => {
    while (bits > 0) {
      const take = Math.min(8 - used, bits)
      cur |= ((v >>> (bits - take)) & ((1 << take) - 1)) << (8 - used - take)
      used += take
      bits -= take
      if (used === 8) {
        packed[at++] = cur
        cur = 0
        used = 0
      }
    }
  }
  for (let i = 0; i < n; i++) {
    put(weak[i]!, weakBits)
    put(strong[i]!, strongBits)
  }
  if (used > 0) packed[at] = cur
  return packed
}

/** Undoes packKeys for `count` blocks; the caller has checked `packed` holds exactly
 *  packedKeyBytes(count, …) bytes. */
export function unpackKeys(packed: Uint8Array, count: number, weakBits: number, strongBits: number): { weak: Uint32Array; strong: Uint32Array } {
  const weak = new Uint32Array(count)
  const strong = new Uint32Array(count)
  let at = 0
  let used = 0
  const get = (bits: number): number => {
    let v = 0
    while (bits > 0) {
      const take = Math.min(8 - used, bits)
      v = v * (1 << take) + ((packed[at]! >>> (8 - used - take)) & ((1 << take) - 1))
      used += take
      bits -= take
      if (used === 8) {
        at++
        used = 0
      }
    }
    return v
  }
  for (let i = 0; i < count; i++) {
    weak[i] = get(weakBits)
    strong[i] = get(strongBits)
  }
  return { weak, strong }
}
