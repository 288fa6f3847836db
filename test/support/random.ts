/** Seeded pseudo-random bytes (like restic's rtest.Random(seed, n)): the same seed gives the
 *  same bytes on every machine, so golden vectors and failing cases reproduce. */
export function randomBytes(seed: number, n: number): Uint8Array {
  const out = new Uint8Array(n)
  let s = seed >>> 0 || 1
  let i = 0
  for (; i + 4 <= n; i += 4) {
    // xorshift32
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    out[i] = s & 0xff
    out[i + 1] = (s >>> 8) & 0xff
    out[i + 2] = (s >>> 16) & 0xff
    out[i + 3] = s >>> 24
  }
  for (; i < n; i++) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    out[i] = s & 0xff
  }
  return out
}

/** Splits bytes into pieces at the given cut fractions, as an async stream. */
export async function* splitStream(data: Uint8Array, sizes: readonly number[]): AsyncGenerator<Uint8Array> {
  let pos = 0
  let k = 0
  while (pos < data.length) {
    const n = Math.max(1, sizes.length ? sizes[k++ % sizes.length]! : data.length)
    yield data.subarray(pos, Math.min(data.length, pos + n))
    pos += n
  }
}

/** Collects an async iterable. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}
