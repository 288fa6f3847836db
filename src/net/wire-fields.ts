import { DsyncError } from '../errors.js'
import { checkRelPath } from '../fs/index.js'

/**
 * Typed reads of one decoded wire object's fields, each checked against its rule. Every
 * failure is a DsyncError('BAD_MESSAGE') naming the message type and the field, so the peer
 * and the log learn exactly what was wrong. Input stays `unknown` until a read returns it.
 */
export class WireFields {
  constructor(
    readonly tag: string,
    private readonly obj: Readonly<Record<string, unknown>>,
  ) {}

  /** A BAD_MESSAGE error about `field` of this message. */
  bad(field: string, why: string, cause?: unknown): DsyncError {
    return new DsyncError('BAD_MESSAGE', `malformed '${this.tag}' message: ${field} ${why}`, { cause })
  }

  raw(field: string): unknown {
    return Object.hasOwn(this.obj, field) ? this.obj[field] : undefined
  }

  /** The map's own keys. */
  keys(): string[] {
    return Object.keys(this.obj)
  }

  has(field: string): boolean {
    return this.raw(field) !== undefined && this.raw(field) !== null
  }

  str(field: string, maxBytes: number, pattern?: RegExp): string {
    return checkStr(this, field, this.raw(field), maxBytes, pattern)
  }

  bool(field: string): boolean {
    const v = this.raw(field)
    if (typeof v !== 'boolean') throw this.bad(field, `must be a boolean, got ${typeName(v)}`)
    return v
  }

  /** A whole number in [min, max]. */
  int(field: string, min: number, max: number): number {
    return checkInt(this, field, this.raw(field), min, max)
  }

  /** A finite number in [min, max]. */
  num(field: string, min: number, max: number): number {
    return checkNum(this, field, this.raw(field), min, max)
  }

  /** Bytes, `exact` long or at most `max` long. Returned as a plain Uint8Array view (no copy). */
  bytes(field: string, len: { exact?: number; max?: number }): Uint8Array {
    return checkBytes(this, field, this.raw(field), len)
  }

  /** A safe relative path (`src/fs/safe-path.ts` rules); '' too when `allowRoot`. */
  path(field: string, allowRoot = false): string {
    return checkPath(this, field, this.raw(field), allowRoot)
  }

  oneOf<const V extends string>(field: string, values: readonly V[]): V {
    const v = this.raw(field)
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
      throw this.bad(field, `must be one of ${values.join(', ')}`)
    }
    return v as V
  }

  array(field: string, maxLength: number): readonly unknown[] {
    const v = this.raw(field)
    if (!Array.isArray(v)) throw this.bad(field, `must be an array, got ${typeName(v)}`)
    if (v.length > maxLength) throw this.bad(field, `has ${v.length} items, more than the limit of ${maxLength}`)
    return v
  }

  /** A nested map, to read with its own WireFields. */
  map(field: string): WireFields {
    const v = this.raw(field)
    if (!isPlainMap(v)) throw this.bad(field, `must be a map, got ${typeName(v)}`)
    return new WireFields(`${this.tag}.${field}`, v)
  }
}

export function checkStr(f: WireFields, field: string, v: unknown, maxBytes: number, pattern?: RegExp): string {
  if (typeof v !== 'string') throw f.bad(field, `must be a string, got ${typeName(v)}`)
  if (v.length > maxBytes || Buffer.byteLength(v) > maxBytes) throw f.bad(field, `is longer than ${maxBytes} bytes`)
  if (pattern !== undefined && !pattern.test(v)) throw f.bad(field, `does not match ${pattern}`)
  return v
}

export function checkNum(f: WireFields, field: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw f.bad(field, `must be a number in [${min}, ${max}], got ${typeName(v)}`)
  }
  return v
}

export function checkInt(f: WireFields, field: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw f.bad(field, `must be a whole number in [${min}, ${max}], got ${typeName(v)}`)
  }
  return v
}

export function checkBytes(f: WireFields, field: string, v: unknown, len: { exact?: number; max?: number }): Uint8Array {
  if (!(v instanceof Uint8Array)) {
    throw f.bad(field, `must be binary, got ${typeName(v)}`)
  }
  if (len.exact !== undefined && v.length !== len.exact) throw f.bad(field, `must be ${len.exact} bytes, got ${v.length}`)
  if (len.max !== undefined && v.length > len.max) throw f.bad(field, `is ${v.length} bytes, more than the limit of ${len.max}`)
  // Plain Uint8Array view over the frame: no copy, and consumers compare equal to what was sent.
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
}

export function checkPath(f: WireFields, field: string, v: unknown, allowRoot: boolean): string {
  if (typeof v !== 'string') throw f.bad(field, `must be a path string, got ${typeName(v)}`)
  if (allowRoot && v === '') return v
  try {
    return checkRelPath(v)
  } catch (err) {
    throw f.bad(field, `is refused: ${err instanceof Error ? err.message : String(err)}`, err)
  }
}

export function isPlainMap(v: unknown): v is Readonly<Record<string, unknown>> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto: unknown = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** A short description of a value's type for error messages (never the value: it may be huge). */
export function typeName(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (v instanceof Uint8Array) return 'binary'
  if (typeof v === 'number') return Number.isFinite(v) ? `${v}` : 'a non-finite number'
  if (typeof v === 'object') return `a ${v.constructor?.name ?? 'object'}`
  return `a ${typeof v}`
}
