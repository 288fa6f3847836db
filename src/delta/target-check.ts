import { FileDigester, newStreamChecker, streamCheckerOrNone, type FileDigest } from '../hash/index.js'

/** What a delta's trailer checks the target with: its SHA-256 (delta format version 1), or the
 *  16 bytes of its XXH3-128 (version 2, PROTOCOL.md §4.11), which is not an identity. */
export type TargetCheck = FileDigest | Uint8Array

/** Whether `check` is an XXH3-128 (a delta of format version 2 ends with it). */
export function isFastCheck(check: TargetCheck): check is Uint8Array {
  return typeof check !== 'string'
}

/** A running hash of the target, of the kind a delta checks it with: XXH3-128 when `fast`, else
 *  SHA-256. */
export async function targetHasher(fast: boolean): Promise<{ update(bytes: Uint8Array): void; digest(): TargetCheck }> {
  return fast ? await newStreamChecker() : new FileDigester()
}

/** The hash a sender checks a target with: XXH3-128 when `fast` and it loads here (not under
 *  `node --jitless`), else SHA-256, which every receiver reads. */
export async function preferredHasher(fast: boolean): Promise<{ update(bytes: Uint8Array): void; digest(): TargetCheck }> {
  return (fast ? await streamCheckerOrNone() : undefined) ?? new FileDigester()
}

/** Whether two checks are the same: of one kind, with the same bytes. */
export function sameCheck(a: TargetCheck, b: TargetCheck): boolean {
  return isFastCheck(a) ? isFastCheck(b) && Buffer.from(a).equals(b) : a === b
}
