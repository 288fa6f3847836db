import { sketchStream, type Sketch, type SketchOptions } from '../similarity/index.js'
import { openFileSource } from './file-source.js'

/** The similarity sketch of the regular file at `path`, streaming (bounded memory). */
export async function sketchPath(path: string, opts: { signal?: AbortSignal; noFollow?: boolean } & SketchOptions = {}): Promise<Sketch> {
  return sketchStream(openFileSource(path, opts), opts)
}
