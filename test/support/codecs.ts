/**
 * Loaded before every test file (.taprc `node-arg: --import`): zstd, which the library loads at
 * its entry points (the CLI's actions, src/index.ts), for tests that import its modules one by
 * one. A test process spawned by a test must await loadCodecs() itself (or run the CLI).
 */
import { loadCodecs } from '../../src/compress/index.js'

await loadCodecs()
