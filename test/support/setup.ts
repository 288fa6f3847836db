/**
 * Loaded before every test file (.taprc `node-arg: --import`):
 * - zstd, which the library loads at its entry points (the CLI's actions, src/index.ts), for
 *   tests that import its modules one by one. A test process spawned by a test must await
 *   loadCodecs() itself (or run the CLI).
 * - the bundled CLI's code cache (src/cli/code-cache.ts) in a directory of the tests' own, which
 *   the dsync processes tests spawn inherit, not the user's ~/.cache/dsync.
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadCodecs } from '../../src/compress/index.js'

process.env.DSYNC_CACHE_DIR ??= join(tmpdir(), `dsync-test-code-cache-${process.getuid?.() ?? 'user'}`)
await loadCodecs()
