// Each test covers the source module it mirrors: dist/test/chunk/cdc.js → dist/src/chunk/cdc.js.
export default function coverageMap(testFile) {
  const m = /dist[\\/]test[\\/](.+)\.js$/.exec(testFile)
  return m ? [`dist/src/${m[1]}.js`] : null
}
