/** Hashing: chunk fingerprints, whole-file digests, stream checks, rolling sums, HMAC. The only
 *  folder that imports node:crypto, @noble/hashes, hash-wasm or xxhash-addon, so a backend switch
 *  is a change here alone. */
export {
  type Fingerprint,
  FINGERPRINT_BYTES,
  fingerprint,
  fingerprintFromBytes,
  fingerprintOfWhole,
  fingerprintToBytes,
  parseFingerprint,
} from './fingerprint.js'
export { type FileDigest, FileDigester, digestBytes, digestStream, parseFileDigest, sha256OfStrings } from './file-digest.js'
export { STREAM_CHECK_BYTES, type StreamChecker, newStreamChecker, streamCheckAvailable, streamCheckBackend, streamCheckerOrNone, wasmStreamChecker } from './stream-check.js'
export { rollingSum, rollSum } from './rolling-sum.js'
export { hmacSha256, sha256Small, macEquals, randomHex, randomToken } from './hmac.js'
