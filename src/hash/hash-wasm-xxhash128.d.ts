// hash-wasm's one-algorithm build (20 KB, against 284 KB for all of them): the types are the
// package's own; the file itself has none.
declare module 'hash-wasm/dist/xxhash128.umd.min.js' {
  import type { createXXHash128 } from 'hash-wasm'
  const mod: { readonly createXXHash128: typeof createXXHash128 }
  export default mod
}
