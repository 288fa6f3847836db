import { sketchStream, type Sketch, type SketchOptions } from '../similarity/index.js'
import { openFileSource } from './file-source.js'

/** The similarity sketch of the regular file at `path`, streaming (bounded memory). */
export async function sketchPath(path: string, opts: { signal?: AbortSignal; noFollow?: boolean } & SketchOptions = {}): Promise<Sketch> {
  const { windows, ...read } = opts
  return sketchStream(openFileSource(path, read), { windows })
}
