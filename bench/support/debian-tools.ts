/**
 * The peer tools the benchmarks run beside dsync (rsync, rdiff, xdelta3, zstd, unison) are
 * Debian packages: installed with apt-get when missing, once per run, as a fresh machine needs.
 */
import { execFileSync } from 'node:child_process'

/** True when `command` is on the PATH. */
export function hasCommand(command: string): boolean {
  try {
    execFileSync('which', [command], { stdio: 'ignore' })
    return true
  } catch (err) {
    // `which` exits 1 for a missing command: the answer, not a failure.
    if (err instanceof Error) return false
    throw err
  }
}

/**
 * Installs the packages of the missing commands (`command → package`) with apt-get, and returns
 * the commands available afterwards. One that is still missing (no root, no network) is for
 * the caller to skip, saying so.
 */
export function ensureCommands(packages: Readonly<Record<string, string>>): Set<string> {
  const missing = Object.keys(packages).filter((c) => !hasCommand(c))
  if (missing.length > 0) {
    const pkgs = [...new Set(missing.map((c) => packages[c]!))]
    console.log(`installing ${pkgs.join(', ')} with apt-get (missing here)`)
    try {
      execFileSync('sh', ['-c', `apt-get update && apt-get install -y ${pkgs.join(' ')}`], { stdio: 'inherit' })
    } catch (err) {
      console.log(`apt-get failed (${err instanceof Error ? err.message : String(err)}): ${missing.join(', ')} may be skipped`)
    }
  }
  return new Set(Object.keys(packages).filter(hasCommand))
}
