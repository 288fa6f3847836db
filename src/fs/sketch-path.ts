import { sketchStream, type Sketch } from '../similarity/index.js'
import { openFileSource } from './file-source.js'

/** The similarity sketch of the regular file at `path`, streaming (bounded memory). */
export async function sketchPath(path: string, opts: { signal?: AbortSignal; noFollow?: boolean } = {}): Promise<Sketch> {
  return sketchStream(openFileSource(path, opts))
}
