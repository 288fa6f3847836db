import { spawn } from 'node:child_process'
import { DsyncError } from '../errors.js'
import { CLOSE, DEFAULT_CHANNEL_LIMITS, type ChannelLimits } from './channel.js'
import { clientHandshake, localVersions, type ClientHandshakeOptions } from './handshake.js'
import { DEFAULT_REMOTE_DSYNC, parseSshTarget, sshCommand } from './ssh-target.js'
import { StreamChannel } from './stream-channel.js'
import type { Transport } from './transport.js'

/** How to reach the remote side through a remote shell. */
export interface SshOptions extends ClientHandshakeOptions {
  /** The remote-shell command, split as rsync splits -e (default `ssh`). */
  readonly rsh?: string
  /** The dsync command on the remote host (default `dsync`). */
  readonly remoteDsync?: string
  readonly signal?: AbortSignal
  readonly limits?: ChannelLimits
  /** Receives the remote shell's stderr; absent, it goes straight to ours (ssh's prompts and
   *  messages, and the remote dsync's, reach the user as they would with rsync). */
  readonly onStderr?: (text: string) => void
  /** After the session's close, how long the remote shell gets to exit before it is killed. */
  readonly exitGraceMs?: number
}

/** What the child process did, once it is over. */
type Exit = { code: number | null; signal: NodeJS.Signals | null } | { error: Error }

// After a normal close the remote may still be closing its store (the client closes as soon as
// its own role is done): it gets this long before it is stopped. ssh itself exits as soon as the
// remote command does, so only a hung connection ever waits this out.
const DEFAULT_EXIT_GRACE_MS = 10_000

/**
 * Opens a session through the system ssh client (or `rsh`): runs `dsync serve --stdio` on the
 * remote host and speaks the protocol's frames over the child's stdin and stdout. ssh has
 * authenticated both ends, so no token is sent; the handshake still agrees versions and role.
 *
 * No handshake deadline here, unlike WebSocket: ssh may be asking for a password, a passphrase
 * or a host key on the terminal first; its own ConnectTimeout bounds the network part, Ctrl+C
 * the rest. The child's lifecycle: the session's close ends its stdin (the remote sees the close
 * record, finishes and exits); a child still alive `exitGraceMs` later is killed; its exit before
 * the session's end is a dropped connection, explained from the exit status (127: no dsync there).
 */
export async function connectSsh(url: string, opts: SshOptions): Promise<Transport> {
  const argv = sshCommand(parseSshTarget(url), opts)
  if (opts.signal?.aborted) throw aborted()
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', opts.onStderr === undefined ? 'inherit' : 'pipe'] })
  if (opts.onStderr !== undefined) child.stderr!.on('data', (b: Buffer) => opts.onStderr!(b.toString('utf8')))
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
    child.once('error', (error) => resolve({ error }))
  })
  let gone = false
  let killTimer: NodeJS.Timeout | undefined
  const kill = (): void => {
    if (!gone) child.kill('SIGTERM')
  }
  const graceMs = opts.exitGraceMs ?? DEFAULT_EXIT_GRACE_MS
  // stdin ends when the session closes (either side's close record): from then on the remote
  // has no reason to live, and a remote shell that lingers is stopped.
  child.stdin!.once('finish', () => {
    if (!gone) killTimer ??= setTimeout(kill, graceMs)
  })
  void exited.then(() => {
    gone = true
    clearTimeout(killTimer)
  })

  const explain = explainExit(argv[0]!, opts.remoteDsync ?? DEFAULT_REMOTE_DSYNC)
  const channel = new StreamChannel(child.stdout!, child.stdin!, {
    limits: opts.limits ?? DEFAULT_CHANNEL_LIMITS,
    explainEnd: async (cause) => {
      // stdout ended first; the exit status (which says why) follows at once. A child that keeps
      // running with its stdout closed is of no more use.
      const timer = setTimeout(kill, graceMs)
      const exit = await exited
      clearTimeout(timer)
      return explain(exit, cause)
    },
  })
  // A child that exits while something it started still holds stdout open (an -e wrapper
  // script) would leave the session waiting. Once it has exited, a stdout that is being read
  // yet brings nothing for a second is taken as dropped; one paused by backpressure still holds
  // the child's last frames, so it is left to drain.
  void exited.then(() => {
    let seen = -1
    const watch = setInterval(() => {
      const stdout = child.stdout!
      if (stdout.readableEnded || stdout.destroyed) clearInterval(watch)
      else if (!stdout.isPaused() && stdout.readableLength === 0 && channel.stats.bytesReceived === seen) {
        clearInterval(watch)
        stdout.destroy(new Error('the remote shell exited'))
      } else seen = channel.stats.bytesReceived
    }, 1000)
    watch.unref()
  })

  // The versions this side speaks load a hash (handshake.ts): while the remote dsync starts.
  void localVersions()
  const onAbort = (): void => {
    channel.fail(aborted(), CLOSE.goingAway)
    kill()
  }
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  const finished = async (): Promise<void> => {
    await exited
  }
  try {
    const version = await clientHandshake(channel, opts, '', url)
    return { channel, subdir: '', version, finished }
  } catch (err) {
    channel.close(CLOSE.normal)
    await finished()
    if (opts.signal?.aborted) throw aborted()
    throw err
  } finally {
    opts.signal?.removeEventListener('abort', onAbort)
  }
}

/** Maps how the remote shell ended to what the user should do about it. */
function explainExit(rsh: string, remoteDsync: string) {
  return (exit: Exit, cause?: Error): DsyncError => {
    if ('error' in exit) {
      const code = (exit.error as NodeJS.ErrnoException).code
      return new DsyncError(
        'NETWORK',
        code === 'ENOENT'
          ? `cannot run the remote shell '${rsh}': not found; install an ssh client or name one with -e/--rsh`
          : `cannot run the remote shell '${rsh}': ${exit.error.message}`,
        { cause: exit.error },
      )
    }
    if (exit.code === 127) {
      return new DsyncError('NETWORK', `dsync not found on the remote host ('${remoteDsync}' exited 127); install it there or pass --remote-dsync`)
    }
    if (exit.code === 255) {
      return new DsyncError('NETWORK', `${rsh} failed (exit 255): see its message above; check the host, the user and the keys`)
    }
    const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`
    return new DsyncError('NETWORK', `the remote side ${how} before the session finished; see any message above, and run the command again`, {
      ...(cause !== undefined && { cause }),
    })
  }
}

function aborted(): DsyncError {
  return new DsyncError('ABORTED', 'connection aborted')
}
