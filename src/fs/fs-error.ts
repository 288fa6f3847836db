import { DsyncError, isDsyncError } from '../errors.js'

/** Turns an OS error on `path` into a DsyncError that says what to do. */
export function fsError(err: unknown, path: string, doing: string): DsyncError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ENOENT') return new DsyncError('NOT_FOUND', `${path}: no such file or directory`, { path, cause: err })
  if (code === 'EISDIR') {
    return new DsyncError('NOT_A_FILE', `${path}: is a directory, expected a regular file`, { path, cause: err })
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new DsyncError('IO', `${path}: permission denied while ${doing}; check the file's permissions`, {
      path,
      cause: err,
    })
  }
  const why = err instanceof Error ? err.message : String(err)
  return new DsyncError('IO', `${path}: cannot ${doing}: ${why}`, { path, cause: err })
}

/** An OS error from acting on `path` as a DsyncError that names it; anything else (a bug) as is. */
export function asFileError(err: unknown, path: string, doing: string): unknown {
  if (isDsyncError(err)) return err
  return typeof (err as NodeJS.ErrnoException | undefined)?.syscall === 'string' ? fsError(err, path, doing) : err
}
