import { patchFile } from '../../fs/index.js'
import type { CliContext } from '../context.js'
import { argPath, blameFile, readArg, requireFile } from '../file-args.js'

/** `dsync patch`'s action (registered in commands/patch.ts). */
export async function runPatch(ctx: CliContext, seed: string, deltafile: string, out: string): Promise<void> {
  requireFile(seed, 'SEED', 'the delta copies from it at random offsets')
  requireFile(out, 'OUT', 'it is written to a temp file and renamed once verified')
  await blameFile(deltafile, () => patchFile(argPath(ctx, seed), readArg(ctx, deltafile), argPath(ctx, out), { signal: ctx.signal }))
}
