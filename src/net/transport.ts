import type { Channel } from './channel.js'
import { connect, type ConnectOptions } from './client.js'
import { connectSsh } from './ssh.js'
import { isSshTarget } from './ssh-target.js'

/** An open session, whatever carries it. */
export interface Transport {
  readonly channel: Channel
  /** '' for the served root, else the subdir the URL named (WebSocket only). */
  readonly subdir: string
  /** The protocol version agreed in the handshake. */
  readonly version: number
  /** Resolves once the transport is gone after the channel's close: for ssh, when the child
   *  process has exited (killed if it lingers), so no remote shell outlives the session. */
  finished(): Promise<void>
}

/** Options of every transport; each takes what applies to it. */
export interface TransportOptions extends ConnectOptions {
  /** ssh: the remote-shell command (`-e/--rsh`), default `ssh`. */
  readonly rsh?: string
  /** ssh: the dsync command on the remote host (`--remote-dsync`), default `dsync`. */
  readonly remoteDsync?: string
  /** ssh: receives the remote shell's stderr; absent, it goes to this process's stderr. */
  readonly onStderr?: (text: string) => void
}

/**
 * Opens a session to `url` and does the handshake, choosing the transport by the URL's form:
 * `ws://` or `wss://` (WebSocket), `ssh://[user@]host[:port]/path` or `[user@]host:path` (the
 * same frames over ssh to `dsync serve --stdio`). The only place above the wire that knows
 * transports exist. Throws what `connect` and `connectSsh` throw.
 */
export async function connectTransport(url: string, opts: TransportOptions): Promise<Transport> {
  // ssh authenticated both ends; a token (say, from DSYNC_TOKEN) has no server to check it.
  if (isSshTarget(url)) return connectSsh(url, { ...opts, token: null })
  const { channel, subdir, version } = await connect(url, opts)
  return { channel, subdir, version, finished: async () => undefined }
}
