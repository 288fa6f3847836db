#!/usr/bin/env bash
# Fresh-machine check (issue 9): the README's first command, `npm install && npx dsync demo`
# (as `npm ci`, from the lock file), on a copy of this tree, with an empty npm cache and a PATH
# that holds node, npm, git and a few core tools but no compiler (no cc, g++, make, python3).
# It proves that nothing compiles or downloads from outside the npm registry at install: every
# native part (lmdb, msgpackr-extract) comes prebuilt in a registry package and zstd is Node's
# own or WebAssembly. It needs the npm registry (the only network it uses).
# Usage: test/install/fresh-install.sh   (test/install/fresh-install.ts runs it under npm test)
set -euo pipefail

# What `dsync demo` prints at its end when the round trip worked (src/cli/commands/demo.ts:
# "home and work trees identical (content, modes, links): yes"); kept loose for wording changes.
DEMO_OK='identical'

repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/dsync-fresh-XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The working tree as it is (committed or not), without anything an install makes.
mkdir "$work/repo"
tar -C "$repo" --exclude=./node_modules --exclude=./dist --exclude=./.git --exclude=./.tap -cf - . | tar -C "$work/repo" -xf -

# A PATH with only these tools, each a link to the real one.
bin="$work/bin"
mkdir "$bin"
for tool in node npm npx git sh bash env cat ls mkdir rm cp mv ln dirname basename readlink realpath uname \
  grep sed tr head tail sort mktemp chmod touch date tar gzip find xargs wc id tee sleep cut; do
  p="$(command -v "$tool" || true)"
  case "$p" in /*) ln -s "$p" "$bin/$tool" ;; esac
done
for compiler in cc gcc g++ c++ clang make python3 python; do
  if PATH="$bin" command -v "$compiler" >/dev/null 2>&1; then
    echo "fresh-install: $compiler is on the test PATH; the check would prove nothing" >&2
    exit 1
  fi
done

# A clean environment for the nested npm: none of the outer npm's or tap's settings.
for v in $(compgen -e); do
  case "$v" in npm_* | NPM_* | INIT_CWD | NODE_OPTIONS | NODE_V8_COVERAGE | TAP* | _TAP*) unset "$v" ;; esac
done
export PATH="$bin"

cd "$work/repo"
start=$SECONDS
npm ci --cache "$work/npm-cache" --no-audit --no-fund --loglevel=error
installed=$SECONDS
# The CLI runs bundled (bin/bundle.js, the prepare script): esbuild's binary is an npm package too.
[ -f dist/bundle/dsync.cjs ] || { echo "fresh-install: npm ci made no dist/bundle/dsync.cjs" >&2; exit 1; }
# The code V8 compiled for the bundle is kept here (src/cli/code-cache.ts), not in the home's cache.
export DSYNC_CACHE_DIR="$work/code-cache"
out="$(npx --cache "$work/npm-cache" dsync demo 2>&1)" || {
  echo "$out" >&2
  echo "fresh-install: npx dsync demo failed" >&2
  exit 1
}
case "$out" in
  *"$DEMO_OK"*yes*) ;;
  *) echo "$out" >&2; echo "fresh-install: the demo did not print: $DEMO_OK" >&2; exit 1 ;;
esac
ls "$DSYNC_CACHE_DIR"/demo-*.v8 >/dev/null 2>&1 || { echo "fresh-install: the demo left no compiled code in $DSYNC_CACHE_DIR" >&2; exit 1; }
echo "fresh-install: ok (npm ci $((installed - start)) s, npx dsync demo $((SECONDS - installed)) s; no compiler on PATH, empty npm cache)"
