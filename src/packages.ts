import { createRequire } from 'node:module'

/**
 * Loads an npm package through its CommonJS build, where it has one. lmdb and msgpackr each ship
 * a single rolled-up file for `require`, where their `import` build is many modules (lmdb's 20,
 * msgpackr's 8) that Node's ESM loader resolves, links and compiles one by one; zstd-wasm has
 * only CommonJS, which `import` first scans for its export names. Every client pays this at
 * start: msgpackr and lmdb took 54–65 ms imported and 33–45 ms required here (by hand, 5 runs
 * each; bench/README "Startup").
 */
export const requirePackage: NodeJS.Require = createRequire(import.meta.url)
