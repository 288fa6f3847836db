/**
 * Every failure a caller or a user may act on has a code. Callers branch on `code`, never on
 * message text. The CLI maps codes to exit numbers in `src/cli/exit-codes.ts`.
 */
export type ErrorCode =
  | 'USAGE' // bad arguments or options
  | 'NOT_FOUND' // a named file or directory does not exist
  | 'NOT_A_FILE' // a directory (or device) where a regular file was expected
  | 'EMPTY_FILE' // an empty file where content is needed to measure anything
  | 'IO' // the OS refused a read or write (permissions, disk full, ...)
  | 'BAD_DATA' // a signature or delta file that is truncated, corrupted or of another version
  | 'DIGEST_MISMATCH' // rebuilt content does not hash to what the sender said
  | 'UNSAFE_PATH' // a path that would escape the root (.., absolute, NUL, symlink)
  | 'AUTH_FAILED' // wrong or missing token
  | 'PROTOCOL_VERSION' // the peer speaks a protocol version we cannot
  | 'BAD_MESSAGE' // a malformed, oversized or unexpected wire message
  | 'NETWORK' // cannot connect, or the connection dropped
  | 'BUSY' // the server is at its cap of connections or sessions; try again later
  | 'CHANGED_ON_RECEIVER' // the receiver's copy changed since the sender last saw it
  | 'SOURCE_CHANGED' // the sender's file kept changing while it was being sent
  | 'PARTIAL' // the run finished but some files failed
  | 'ABORTED' // cancelled (Ctrl+C, AbortSignal)
  | 'INTERNAL' // a bug: please report it

/** Options carried with an error: the file it concerns and the underlying cause. */
export interface ErrorDetails {
  readonly path?: string
  readonly cause?: unknown
}

/** The one error class of dsync. `message` is written for the user: what, where, what to do. */
export class DsyncError extends Error {
  readonly path: string | undefined
  constructor(
    readonly code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.name = 'DsyncError'
    this.path = details.path
  }
}

/** True when `err` is a DsyncError, optionally with the given code. */
export function isDsyncError(err: unknown, code?: ErrorCode): err is DsyncError {
  return err instanceof DsyncError && (code === undefined || err.code === code)
}

/** Throws a BAD_DATA error unless `cond` holds: for parsers of untrusted bytes. */
export function ensureData(cond: boolean, what: string): asserts cond {
  if (!cond) throw new DsyncError('BAD_DATA', what)
}
