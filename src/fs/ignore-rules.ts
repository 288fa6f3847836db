import ignore, { type Ignore } from 'ignore'

/** Name of the per-directory ignore file (gitignore syntax), read at every level of the tree. */
export const IGNORE_FILE_NAME = '.dsyncignore'

interface Level {
  /** Directory the rules belong to, relative to the root: '' for the root, else 'a/b/'. */
  readonly prefix: string
  readonly matcher: Ignore
}

/**
 * The ignore rules in force in one directory: the `--exclude` patterns, then the `.dsyncignore`
 * of the root and of each directory down to this one. As in git, a deeper file's rules come later
 * and win (`!keep.log` in a subdirectory re-includes what the root excluded), and a path inside
 * an excluded directory stays excluded (the walk never enters it). `--exclude` patterns are
 * applied last and cannot be re-included, as rsync's `--exclude` cannot be overridden by a file
 * in the tree: a user who types an exclude means it.
 * Immutable: `withFile` returns the rules for a subdirectory.
 */
export class IgnoreRules {
  readonly #levels: readonly Level[]
  readonly #exclude: Ignore | undefined

  private constructor(levels: readonly Level[], exclude: Ignore | undefined) {
    this.#levels = levels
    this.#exclude = exclude
  }

  /** Rules for the root: just the exclude patterns (gitignore syntax, relative to the root). */
  static root(exclude: readonly string[] = []): IgnoreRules {
    return new IgnoreRules([], exclude.length > 0 ? ignore().add(exclude) : undefined)
  }

  /** Adds the text of the ignore file found in directory `dir` ('' for the root). */
  withFile(dir: string, text: string): IgnoreRules {
    const prefix = dir === '' ? '' : `${dir}/`
    return new IgnoreRules([...this.#levels, { prefix, matcher: ignore().add(text) }], this.#exclude)
  }

  /** True when the entry at `path` (relative to the root) is excluded. */
  ignores(path: string, isDir: boolean): boolean {
    const suffix = isDir ? '/' : ''
    if (this.#exclude?.ignores(path + suffix)) return true
    let ignored = false
    for (const { prefix, matcher } of this.#levels) {
      // Every level's prefix is an ancestor directory of `path`: the walk only adds a level for
      // the directory it is in.
      const r = matcher.test(path.slice(prefix.length) + suffix)
      if (r.ignored) ignored = true
      else if (r.unignored) ignored = false
    }
    return ignored
  }
}
