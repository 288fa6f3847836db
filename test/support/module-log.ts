/**
 * Lists every module a Node process loads: `node --import ./dist/test/support/module-log.js …`
 * with DSYNC_MODULE_LOG=FILE appends one `file:` URL per line to FILE. ES modules are logged by
 * a `load` hook (it runs in Node's hooks thread, so it writes synchronously as each one loads);
 * CommonJS modules (commander, ws, …), which Node 20's hooks do not see when a CommonJS module
 * requires them, are added from the require cache when the process exits. For tests of what a
 * command loads (test/cli/startup.ts) and the startup benchmark (bench/startup.ts); the hooks
 * thread costs ~20 ms, so time startup without this.
 */
import { appendFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'
import { pathToFileURL } from 'node:url'
import { isMainThread } from 'node:worker_threads'

interface LoadContext {
  readonly format?: string | null
}
type NextLoad = (url: string, context: LoadContext) => Promise<unknown>

let logFile: string | undefined

/** Hooks thread: where to write. */
export function initialize(data: { file: string }): void {
  logFile = data.file
}

/** Hooks thread: every module loaded, as it loads. */
export async function load(url: string, context: LoadContext, next: NextLoad): Promise<unknown> {
  if (logFile !== undefined && url.startsWith('file:')) appendFileSync(logFile, url + '\n')
  return next(url, context)
}

const file = process.env['DSYNC_MODULE_LOG']
if (isMainThread && file !== undefined && file !== '') {
  register(import.meta.url, { data: { file } })
  const cache = createRequire(import.meta.url).cache
  process.on('exit', () => {
    const cjs = Object.keys(cache).map((p) => pathToFileURL(p).href)
    if (cjs.length > 0) appendFileSync(file, cjs.join('\n') + '\n')
  })
}
