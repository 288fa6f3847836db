import type { ErrorCode } from '../errors.js'

/**
 * Exit codes, one per kind of failure a script may want to tell apart. The README's table is
 * checked against this one by test/cli/exit-codes.ts.
 */
export const EXIT_CODES: Readonly<Record<ErrorCode | 'OK', number>> = Object.freeze({
  OK: 0,
  INTERNAL: 1,
  USAGE: 2,
  NOT_FOUND: 3,
  NOT_A_FILE: 3,
  EMPTY_FILE: 3,
  IO: 4,
  BAD_DATA: 5,
  DIGEST_MISMATCH: 5,
  NETWORK: 6,
  AUTH_FAILED: 7,
  PROTOCOL_VERSION: 8,
  BAD_MESSAGE: 8,
  UNSAFE_PATH: 9,
  CHANGED_ON_RECEIVER: 10,
  SOURCE_CHANGED: 10,
  PARTIAL: 10,
  BUSY: 11,
  ABORTED: 130,
})

/** One line per exit code, for `--help` and the README. */
export const EXIT_CODE_TABLE: readonly (readonly [number, string])[] = Object.freeze([
  [0, 'success'],
  [1, 'internal error (a bug: please report it, with --debug output)'],
  [2, 'usage: bad arguments or options'],
  [3, 'input file missing, a directory, or empty'],
  [4, 'I/O error: permission denied, disk full, ...'],
  [5, 'corrupt or truncated data: signature or delta file, or rebuilt file failed its hash'],
  [6, 'network: cannot connect, or the connection dropped'],
  [7, 'authentication failed: wrong or missing token'],
  [8, 'protocol: version mismatch or malformed message'],
  [9, 'unsafe path refused (.., absolute, NUL, symlink escape)'],
  [10, 'partial: some files were not synced (conflicts or per-file errors); the rest were'],
  [11, 'server busy: too many connections or sessions; try again later'],
  [130, 'interrupted (Ctrl+C, or SIGTERM)'],
])
