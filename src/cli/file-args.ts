import { once } from 'node:events'
import { isAbsolute, resolve } from 'node:path'
import type { ByteSink } from '../delta/index.js'
import { DsyncError } from '../errors.js'
import { openFileSource, writeAtomically } from '../fs/index.js'
import type { CliContext } from './context.js'

/** The argument that means standard input or output. */
export const STDIO_ARG = '-'

/** A file argument resolved against the command's working directory. */
export function argPath(ctx: CliContext, arg: string): string {
  return isAbsolute(arg) ? arg : resolve(ctx.cwd, arg)
}

function stdio(ctx: CliContext): NonNullable<CliContext['stdio']> {
  if (ctx.stdio !== undefined) return ctx.stdio
  const out = process.stdout
  return {
    stdin: process.stdin,
    stdout: {
      // Backpressure: wait for 'drain' when the pipe is full, so memory stays bounded.
      async write(bytes: Uint8Array): Promise<void> {
        if (!out.write(bytes)) await once(out, 'drain')
      },
    },
  }
}

/** Refuses `-` where a seekable file is needed. */
export function requireFile(arg: string, what: string, why: string): void {
  if (arg === STDIO_ARG) throw new DsyncError('USAGE', `${what} cannot be '-' (standard input/output): ${why}`)
}

/** Bytes of a file argument, or of stdin for `-`, streamed. */
export function readArg(ctx: CliContext, arg: string): AsyncIterable<Uint8Array> {
  return arg === STDIO_ARG ? stdio(ctx).stdin : openFileSource(argPath(ctx, arg), { signal: ctx.signal })
}

/** Reads a whole (small) input: a signature. Refuses more than `limit` bytes. */
export async function readSmallArg(ctx: CliContext, arg: string, limit: number, what: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  let n = 0
  for await (const b of readArg(ctx, arg)) {
    n += b.length
    if (n > limit) throw new DsyncError('BAD_DATA', `${arg}: larger than any ${what} (${limit} bytes); is it the right file?`, { path: arg })
    parts.push(b.slice())
  }
  return Buffer.concat(parts)
}

/**
 * Writes an output argument: atomically into the file (never a half-written one, even on
 * Ctrl+C or a bad input), or to stdout for `-`.
 */
export async function writeArg<T>(ctx: CliContext, arg: string, produce: (sink: ByteSink) => Promise<T>): Promise<T> {
  if (arg === STDIO_ARG) return produce(stdio(ctx).stdout)
  return writeAtomically(argPath(ctx, arg), produce, { signal: ctx.signal })
}

/** Adds the file name to a BAD_DATA error about its content, so the user knows which file. */
export function blameFile<T>(arg: string, run: () => Promise<T>): Promise<T> {
  return run().catch((err: unknown) => {
    if (err instanceof DsyncError && err.code === 'BAD_DATA' && err.path === undefined) {
      throw new DsyncError('BAD_DATA', `${arg === STDIO_ARG ? 'stdin' : arg}: ${err.message}`, { path: arg, cause: err })
    }
    throw err
  })
}
