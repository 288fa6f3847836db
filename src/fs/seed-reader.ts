import type { SeedReader } from '../delta/index.js'
import { DsyncError } from '../errors.js'
import { fsError } from './fs-error.js'
import { openRegular } from './open-regular.js'

/**
 * Opens a regular file for random reads by applyDelta. The file stays open (and readable even
 * if renamed over, as patching in place does) until `close()`. A read that finds the file
 * shorter than when it was opened throws IO: the seed changed under us. `noFollow`: refuse a
 * symlink at `path` (see openRegular).
 */
export async function openSeedReader(path: string, opts: { noFollow?: boolean } = {}): Promise<SeedReader & { close(): Promise<void> }> {
  const handle = await openRegular(path, { noFollow: opts.noFollow === true })
  let size: number
  try {
    size = (await handle.stat()).size
  } catch (err) {
    await handle.close()
    throw fsError(err, path, 'read it')
  }
  return {
    size,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const out = new Uint8Array(length)
      for (let got = 0; got < length; ) {
        let n: number
        try {
          ;({ bytesRead: n } = await handle.read(out, got, length - got, offset + got))
        } catch (err) {
          throw fsError(err, path, 'read it')
        }
        if (n === 0) throw new DsyncError('IO', `${path}: the seed file shrank while it was being read; run the command again`, { path })
        got += n
      }
      return out
    },
    close: () => handle.close(),
  }
}
