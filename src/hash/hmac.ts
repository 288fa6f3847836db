import { hmac } from '@noble/hashes/hmac.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * HMAC-SHA256 from @noble/hashes: inputs here are tiny (a challenge and a token), where
 * speed does not matter and an audited, dependency-free implementation does.
 */
export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  return hmac(sha256, key, message)
}

/** SHA-256 of a small input (a token), for storing or keying without keeping the secret. */
export function sha256Small(data: Uint8Array): Uint8Array {
  return sha256(data)
}

/** Compares two MACs in constant time; false (not a throw) when the lengths differ. */
export function macEquals(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/** `bytes` fresh random bytes as lowercase hex (ids: a tree's replica id). */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex')
}

/** A fresh random token (base64url), for a shared secret such as the demo's server token. */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url')
}
