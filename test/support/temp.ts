import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Test } from 'tap'

/** Makes a temp dir holding the given files (path → content), removed when the test ends. */
export async function tempTree(t: Test, files: Readonly<Record<string, string | Uint8Array>> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'dsync-test-'))
  // Retries: a server session may still be closing its store in the tree when the test ends.
  t.teardown(() => rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }))
  for (const [rel, content] of Object.entries(files)) {
    const p = join(root, rel)
    await mkdir(dirname(p), { recursive: true })
    await writeFile(p, content)
  }
  return root
}
