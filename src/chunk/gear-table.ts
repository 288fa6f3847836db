/**
 * The Gear table: 256 pseudo-random 32-bit values, one per byte value. Fixed forever: every
 * dsync computes the same cut points, so changing this table (or its seed) is a protocol
 * change and must update test/fixtures/cdc-golden.json.
 *
 * Made by splitmix32 from a fixed seed rather than pasted as 256 literals, so it is short to
 * read and easy to check. Int32Array: the hot loop then stays in small-integer arithmetic.
 */
function makeGearTable(seed: number): Int32Array {
  const t = new Int32Array(256)
  let s = seed | 0
  for (let i = 0; i < 256; i++) {
    s = (s + 0x9e3779b9) | 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    t[i] = z ^ (z >>> 16)
  }
  return t
}

export const GEAR: Int32Array = makeGearTable(0x64737963) // "dsyc"
