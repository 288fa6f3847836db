import { ensureData } from '../errors.js'
import { ByteWriter, openFormat, unzigzag } from './bytes.js'
import type { OpSink } from './matcher.js'

/** Target bytes [target, target+length) equal seed bytes [seed, seed+length). */
export interface Match {
  readonly target: number
  readonly seed: number
  readonly length: number
}

/**
 * What one matching round found: the copies, in target order, not overlapping, adjacent ones
 * merged. The target bytes between them are the holes (holesOf) a refinement round works on.
 */
export interface MatchList {
  readonly seedSize: number
  readonly targetSize: number
  readonly matches: readonly Match[]
}

/** True when the matches copy the whole seed in place, the target being as long: the target
 *  is the seed, as far as the keys can tell (a file only touched; the delta's digest decides). */
export function isIdentity(list: MatchList): boolean {
  if (list.seedSize !== list.targetSize || list.seedSize === 0) return false
  let at = 0
  for (const m of list.matches) {
    if (m.target !== at || m.seed !== at) return false
    at += m.length
  }
  return at === list.targetSize
}

/** Records a matcher's copies (its literals only advance the target position). */
export class MatchRecorder implements OpSink {
  readonly matches: Match[] = []
  #pos = 0

  get position(): number {
    return this.#pos
  }

  copy(offset: number, length: number): void {
    this.add(this.#pos, offset, length)
    this.#pos += length
  }

  literal(bytes: Uint8Array): void {
    this.#pos += bytes.length
  }

  /** A match found elsewhere (a refinement round); must come after the last one in target order. */
  add(target: number, seed: number, length: number): void {
    const last = this.matches[this.matches.length - 1]
    if (last !== undefined && last.target + last.length === target && last.seed + last.length === seed) {
      this.matches[this.matches.length - 1] = { target: last.target, seed: last.seed, length: last.length + length }
    } else this.matches.push({ target, seed, length })
  }
}

/**
 * A target range no match covers, and the seed range between the seed ends of the matches
 * around it: where the bytes it replaced most likely are (an edit inside a run of copies). The
 * seed range is empty when the matches around the hole are out of order in the seed (a move),
 * and at the very start and end it runs from / to the seed's own start and end.
 */
export interface Hole {
  readonly target: number
  readonly length: number
  readonly seed: number
  readonly seedLength: number
}

/** The holes of a match list, in target order. */
export function holesOf(list: MatchList): Hole[] {
  const holes: Hole[] = []
  let tEnd = 0
  let sEnd = 0
  const at = (t: number, s: number): void => {
    if (t > tEnd) holes.push({ target: tEnd, length: t - tEnd, seed: sEnd, seedLength: Math.max(0, s - sEnd) })
  }
  for (const m of list.matches) {
    at(m.target, m.seed)
    tEnd = m.target + m.length
    sEnd = m.seed + m.length
  }
  at(list.targetSize, list.seedSize)
  return holes
}

/** Most matches a reader takes (~45 MB of match and hole objects at most). A sender with more
 *  sends an empty list instead, which the receiver never refines (PROTOCOL.md §4.1). */
export const MAX_MATCHES = 512 * 1024

/** "dsM", the match report's magic (protocol/DELTA.md, "Refinement"). */
export const MATCHES_MAGIC = Object.freeze([0x64, 0x73, 0x4d])
export const MATCHES_VERSION = 1

/**
 * Encodes a match list: magic, version, seedSize, targetSize, count, then per match the target
 * gap since the previous match's end, the seed offset as a zigzag step from the previous
 * match's seed end, and the length (all varints). About 5 bytes a match.
 */
export function encodeMatches(list: MatchList): Uint8Array {
  const w = new ByteWriter(32 + 6 * list.matches.length)
  for (const m of MATCHES_MAGIC) w.u8(m)
  w.u8(MATCHES_VERSION)
  w.varint(list.seedSize)
  w.varint(list.targetSize)
  w.varint(list.matches.length)
  let tEnd = 0
  let sEnd = 0
  for (const m of list.matches) {
    w.varint(m.target - tEnd)
    w.zigzag(m.seed - sEnd)
    w.varint(m.length)
    tEnd = m.target + m.length
    sEnd = m.seed + m.length
  }
  return w.take()
}

/**
 * Decodes and checks a match list: every match inside the seed and the target, in target
 * order, not overlapping, of length ≥ 1; at most MAX_MATCHES; nothing after the last. Anything
 * else is BAD_DATA. Memory is proportional to the input (each match takes ≥ 3 bytes, checked
 * before allocating).
 */
export function decodeMatches(bytes: Uint8Array): MatchList {
  const r = openFormat(bytes, MATCHES_MAGIC, MATCHES_VERSION, 'match list')
  const seedSize = r.varint()
  const targetSize = r.varint()
  const count = r.varint()
  ensureData(count * 3 <= r.left, `match list: ${count} matches cannot fit in ${r.left} bytes`)
  ensureData(count <= MAX_MATCHES, `match list: ${count} matches, more than ${MAX_MATCHES}`)
  const matches: Match[] = []
  let tEnd = 0
  let sEnd = 0
  for (let i = 0; i < count; i++) {
    const target = tEnd + r.varint()
    const seed = sEnd + unzigzag(r.varint())
    const length = r.varint()
    ensureData(length >= 1 && seed >= 0 && seed + length <= seedSize && target + length <= targetSize, `match list: match ${i} (target ${target}, seed ${seed}, ${length} bytes) is outside the seed or the target`)
    matches.push({ target, seed, length })
    tEnd = target + length
    sEnd = seed + length
  }
  ensureData(r.left === 0, 'match list: trailing bytes')
  return { seedSize, targetSize, matches }
}
