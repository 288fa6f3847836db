import { DsyncError } from '../errors.js'
import { atLevel, NO_AHEAD, type Sketch } from './sketch.js'

/**
 * A sketch as bytes, for the index and the wire:
 *   u8 format, varint size, u8 level, varint anchors, varint tiny length, tiny bytes,
 *   then per anchor: u32le h(p), u24le low bits of h(p − 32), [format 2: u24le each of its
 *   windows' hashes (AnchorWindows: w32, w64, centred; 0xffffff for no centred window),]
 *   varint count.
 * 8 bytes an anchor in format 1, 17 in format 2 (the count is 1 byte but for long repeats).
 * Format 1 is what dsync before protocol 5 reads, and what the index keeps.
 */
export type SketchFormat = 1 | 2
const AHEAD_NONE_WIRE = 0xffffff

function bad(what: string): DsyncError {
  return new DsyncError('BAD_DATA', `sketch: ${what}`)
}

class Writer {
  #buf = new Uint8Array(64)
  #n = 0
  #room(k: number): void {
    if (this.#n + k <= this.#buf.length) return
    const next = new Uint8Array(Math.max(2 * this.#buf.length, this.#n + k))
    next.set(this.#buf.subarray(0, this.#n))
    this.#buf = next
  }
  byte(v: number): void {
    this.#room(1)
    this.#buf[this.#n++] = v & 0xff
  }
  varint(v: number): void {
    for (; v >= 0x80; v = Math.floor(v / 128)) this.byte((v % 128) | 0x80)
    this.byte(v)
  }
  uint(v: number, bytes: number): void {
    for (let i = 0; i < bytes; i++) this.byte(v >>> (8 * i))
  }
  bytes(b: Uint8Array): void {
    this.#room(b.length)
    this.#buf.set(b, this.#n)
    this.#n += b.length
  }
  done(): Uint8Array {
    return this.#buf.slice(0, this.#n)
  }
}

class Reader {
  #p = 0
  constructor(readonly buf: Uint8Array) {}
  byte(): number {
    if (this.#p >= this.buf.length) throw bad('truncated')
    return this.buf[this.#p++]!
  }
  varint(): number {
    let v = 0
    for (let scale = 1; ; scale *= 128) {
      const b = this.byte()
      v += (b & 0x7f) * scale
      if (b < 0x80) return v
      if (scale > 2 ** 49) throw bad('varint too long')
    }
  }
  uint(bytes: number): number {
    let v = 0
    for (let i = 0; i < bytes; i++) v += this.byte() * 2 ** (8 * i)
    return v
  }
  bytes(n: number): Uint8Array {
    if (this.#p + n > this.buf.length) throw bad('truncated')
    this.#p += n
    return this.buf.slice(this.#p - n, this.#p)
  }
  end(): void {
    if (this.#p !== this.buf.length) throw bad('trailing bytes')
  }
}

/** The sketch as bytes: format 2 when it has its windows and `format` allows, else format 1. */
export function encodeSketch(s: Sketch, format: SketchFormat = 2): Uint8Array {
  const windows = format === 2 ? s.windows : undefined
  const w = new Writer()
  w.byte(windows === undefined ? 1 : 2)
  w.varint(s.size)
  w.byte(s.level)
  w.varint(s.short.length)
  w.varint(s.tiny.length)
  w.bytes(s.tiny)
  for (let k = 0; k < s.short.length; k++) {
    w.uint(s.short[k]!, 4)
    w.uint(s.prior[k]!, 3)
    if (windows !== undefined) {
      w.uint(windows.w32[k]!, 3)
      w.uint(windows.w64[k]!, 3)
      w.uint(windows.centred[k] === NO_AHEAD ? AHEAD_NONE_WIRE : windows.centred[k]!, 3)
    }
    w.varint(s.count[k]!)
  }
  return w.done()
}

/** The sketch encoded in at most `maxBytes`: cut to coarser levels until it fits (a file of
 *  ~200 MiB and up in format 1, or one of long repeats, whose anchors are many). */
export function encodeSketchWithin(s: Sketch, format: SketchFormat, maxBytes: number): Uint8Array {
  for (let cut = s; ; cut = atLevel(cut, cut.level + 1)) {
    const bytes = encodeSketch(cut, format)
    if (bytes.length <= maxBytes || cut.short.length === 0) return bytes
  }
}

/** Decodes what encodeSketch wrote (either format); BAD_DATA on anything else. */
export function decodeSketch(buf: Uint8Array): Sketch {
  const r = new Reader(buf)
  const format = r.byte()
  if (format !== 1 && format !== 2) throw bad(`unknown format ${format}`)
  const size = r.varint()
  const level = r.byte()
  const n = r.varint()
  if (level > 32 || n * (format === 1 ? 8 : 17) > buf.length) throw bad('bad header')
  const tiny = r.bytes(r.varint())
  const short = new Uint32Array(n)
  const prior = new Uint32Array(n)
  const windows = format === 2 ? { w32: new Uint32Array(n), w64: new Uint32Array(n), centred: new Uint32Array(n) } : undefined
  const count = new Uint32Array(n)
  for (let k = 0; k < n; k++) {
    short[k] = r.uint(4)
    prior[k] = r.uint(3)
    if (windows !== undefined) {
      windows.w32[k] = r.uint(3)
      windows.w64[k] = r.uint(3)
      const v = r.uint(3)
      windows.centred[k] = v === AHEAD_NONE_WIRE ? NO_AHEAD : v
    }
    count[k] = r.varint()
  }
  r.end()
  return { size, level, short, prior, ...(windows && { windows }), count, tiny }
}
