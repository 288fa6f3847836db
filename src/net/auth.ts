import { hmacSha256, macEquals } from '../hash/index.js'
import { LIMITS } from '../../protocol/messages.js'
import type { Role } from './messages.js'

/**
 * Token challenge–response, both ways (PROTOCOL.md "Authentication"). Each side sends a fresh
 * random challenge; each proves the token with HMAC-SHA256(token, transcript). The token never
 * crosses the wire. Client and server MACs use different labels and challenge orders, so one
 * side's proof can never be replayed or reflected as the other's; the transcript binds the
 * version, role and subdir, so a recorded proof is useless for another session or request.
 */

/** What both proofs cover. Challenges are `LIMITS.challengeBytes` each. */
export interface AuthTranscript {
  readonly version: number
  readonly serverChallenge: Uint8Array
  readonly clientChallenge: Uint8Array
  readonly role: Role
  readonly subdir: string
}

const CLIENT_LABEL = 'dsync-auth-client-v1'
const SERVER_LABEL = 'dsync-auth-server-v1'

/** A fresh random challenge (Web Crypto CSPRNG: node:crypto stays inside src/hash). */
export function newChallenge(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(LIMITS.challengeBytes))
}

/** The client's proof: HMAC(token, client label ‖ transcript with the server's challenge first). */
export function clientMac(token: string, t: AuthTranscript): Uint8Array {
  return hmacSha256(tokenKey(token), transcriptBytes(CLIENT_LABEL, t.serverChallenge, t.clientChallenge, t))
}

/** The server's proof: HMAC(token, server label ‖ transcript with the client's challenge first). */
export function serverMac(token: string, t: AuthTranscript): Uint8Array {
  return hmacSha256(tokenKey(token), transcriptBytes(SERVER_LABEL, t.clientChallenge, t.serverChallenge, t))
}

/** Constant-time check of a received MAC; false for a wrong length (an empty MAC included). */
export function verifyMac(expected: Uint8Array, received: Uint8Array): boolean {
  return macEquals(expected, received)
}

function tokenKey(token: string): Uint8Array {
  return new TextEncoder().encode(token)
}

/** label ‖ 0 ‖ u32be version ‖ first challenge ‖ second challenge ‖ role ‖ 0 ‖ u32be len ‖ subdir.
 *  Every variable part is length-prefixed or NUL-terminated, so no two transcripts collide. */
function transcriptBytes(label: string, first: Uint8Array, second: Uint8Array, t: AuthTranscript): Uint8Array {
  const enc = new TextEncoder()
  const parts = [enc.encode(label), Uint8Array.of(0), u32(t.version), u32(first.length), first, u32(second.length), second,
    enc.encode(t.role), Uint8Array.of(0)]
  const subdir = enc.encode(t.subdir)
  parts.push(u32(subdir.length), subdir)
  return Buffer.concat(parts)
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setUint32(0, n >>> 0, false)
  return b
}
