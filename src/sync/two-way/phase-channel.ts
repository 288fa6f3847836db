import { DsyncError } from '../../errors.js'
import { wrapChannel, type Channel, type FileEntry, type Message } from '../../net/index.js'

/**
 * One phase of a two-way sync on the session's channel: a push-like or pull-like transfer run
 * by the ordinary sender and receiver roles. Its message stream ends at the peer's `step
 * phaseEnd` (the sender of the phase sends it once its receiver said `done`), so the roles
 * return and the next phase reads on from the same channel. `onEntry` sees each entry of the
 * phase's file list (the receiving side records what it got as its new bases).
 */
export function phaseChannel(channel: Channel, onEntry?: (e: FileEntry) => void): Channel {
  return wrapChannel(channel, {
    async *messages() {
      for await (const msg of channel.messages()) {
        if (msg.t === 'step') {
          if (msg.name === 'phaseEnd') return
          throw new DsyncError('BAD_MESSAGE', `unexpected step '${msg.name}' during a transfer phase`)
        }
        if (msg.t === 'files' && onEntry !== undefined) for (const e of msg.entries) onEntry(e)
        yield msg
      }
    },
  })
}

/**
 * Reads messages until `handle` returns true; `notice`s without a path go to `onNotice`. A
 * normal close before that is NETWORK (`what` says what was awaited).
 */
export async function readUntil(
  channel: Channel,
  what: string,
  handle: (msg: Message) => boolean | Promise<boolean>,
  onNotice?: (message: string) => void,
): Promise<void> {
  for await (const msg of channel.messages()) {
    if (msg.t === 'notice' && msg.path === undefined) {
      onNotice?.(msg.message)
      continue
    }
    if (await handle(msg)) return
  }
  throw new DsyncError('NETWORK', `the peer ended the session before ${what}; run the command again`)
}
