import { DsyncError, ensureData } from '../errors.js'

/** A growable byte buffer for building encoded records (signature, delta pieces). */
export class ByteWriter {
  #buf: Uint8Array
  #len = 0

  constructor(initial = 256) {
    this.#buf = new Uint8Array(initial)
  }

  get length(): number {
    return this.#len
  }

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return
    const next = new Uint8Array(Math.max(this.#buf.length * 2, this.#len + n))
    next.set(this.#buf.subarray(0, this.#len))
    this.#buf = next
  }

  u8(v: number): void {
    this.#room(1)
    this.#buf[this.#len++] = v
  }

  bytes(b: Uint8Array): void {
    this.#room(b.length)
    this.#buf.set(b, this.#len)
    this.#len += b.length
  }

  /** Unsigned LEB128; `v` must be a safe non-negative integer. */
  varint(v: number): void {
    this.#room(8)
    while (v >= 0x80) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80
      v = Math.floor(v / 0x80)
    }
    this.#buf[this.#len++] = v
  }

  /** Signed integer as a zigzag varint: 0, -1, 1, -2, … → 0, 1, 2, 3, … */
  zigzag(v: number): void {
    this.varint(v < 0 ? -2 * v - 1 : 2 * v)
  }

  /** The bytes written so far (a copy, so the writer can be reused). */
  take(): Uint8Array {
    const out = this.#buf.slice(0, this.#len)
    this.#len = 0
    return out
  }
}

/** Most bytes a varint of a safe integer (< 2^53) takes. */
export const MAX_VARINT_BYTES = 8

/** Reads varints and fixed fields from bytes in memory; BAD_DATA on anything out of range. */
export class ByteReader {
  pos = 0
  constructor(
    readonly buf: Uint8Array,
    readonly what: string,
  ) {}

  get left(): number {
    return this.buf.length - this.pos
  }

  u8(): number {
    ensureData(this.pos < this.buf.length, `${this.what}: truncated`)
    return this.buf[this.pos++]!
  }

  varint(): number {
    return readVarint(() => this.u8(), this.what)
  }

  bytes(n: number): Uint8Array {
    ensureData(n <= this.left, `${this.what}: truncated`)
    const out = this.buf.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }
}

/** Decodes one LEB128 varint from successive bytes; rejects overlong or > 2^53 values. */
export function readVarint(next: () => number, what: string): number {
  let v = 0
  let scale = 1
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    const b = next()
    v += (b & 0x7f) * scale
    if ((b & 0x80) === 0) {
      ensureData(i === 0 || b !== 0, `${what}: overlong number encoding`)
      ensureData(Number.isSafeInteger(v), `${what}: number out of range`)
      return v
    }
    scale *= 0x80
  }
  throw new DsyncError('BAD_DATA', `${what}: number too long`)
}

/** Inverse of ByteWriter.zigzag. */
export function unzigzag(v: number): number {
  return v % 2 === 1 ? -(v + 1) / 2 : v / 2
}

/**
 * A reader past the header every dsync binary format starts with: its magic bytes, then a
 * version byte. BAD_DATA naming `what` when the magic differs ("not a dsync …") or the version
 * is not `version` (`hint` says what to do about it).
 */
export function openFormat(bytes: Uint8Array, magic: readonly number[], version: number, what: string, hint = ''): ByteReader {
  ensureData(bytes.length > magic.length && magic.every((m, i) => bytes[i] === m), `not a dsync ${what} (bad magic bytes)`)
  const r = new ByteReader(bytes, what)
  r.pos = magic.length
  const got = r.u8()
  if (got !== version) throw new DsyncError('BAD_DATA', `${what} version ${got} is not supported (this dsync reads version ${version})${hint}`)
  return r
}
