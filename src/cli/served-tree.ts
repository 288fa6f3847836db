/** A served tree where a command takes a directory (`dsync similar FILE URL`, `dsync groups
 *  URL`): a URL with a scheme. `host:path` stays a local path there (push and pull, whose URL
 *  has its own place, take it for ssh). */
const SERVED_TREE = /^(wss?|ssh):\/\//i

export function isServedTree(arg: string): boolean {
  return SERVED_TREE.test(arg)
}
