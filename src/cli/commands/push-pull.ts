import { Option, type Command } from 'commander'
import type { CliContext } from '../context.js'
import { addSessionOptions, addSyncOptions, type SyncCliOptions } from './sync-options.js'

export type SyncKind = 'push' | 'pull' | 'sync'

/** Runs push, pull or sync: the library is loaded only now (see LAZY_LOAD in main.ts). */
async function runSync(kind: SyncKind, local: string, url: string, o: SyncCliOptions, ctx: CliContext): Promise<void> {
  const action = await import('../actions/push-pull.js')
  await action.runSync(kind, local, url, o, ctx)
}

const URL_HELP = 'ws://host:port[/subdir], wss://… (TLS), or ssh://[user@]host[:port]/path and [user@]host:path (through ssh)'

export function registerPushPull(program: Command, ctx: CliContext): void {
  addSyncOptions(
    program
      .command('push')
      .description('send a local directory tree to a dsync server, with the fewest bytes on the wire')
      .argument('<local_dir>', 'directory to send')
      .argument('<url>', URL_HELP),
  )
    .addHelpText('after', '\nExamples:\n  dsync push ~/notes ws://work.example:8730/notes --token-file ~/.dsync-token -v --stats\n  DSYNC_TOKEN=… dsync push -n --delete . ws://127.0.0.1:8730\n  dsync push ~/notes me@work.example:notes -e "ssh -p 2222"\n')
    .action((local: string, url: string, o: SyncCliOptions) => runSync('push', local, url, o, ctx))
  addSyncOptions(
    program
      .command('pull')
      .description('bring a directory tree from a dsync server into a local directory (created if missing)')
      .argument('<url>', URL_HELP)
      .argument('<local_dir>', 'directory to write'),
  )
    .addHelpText('after', '\nExamples:\n  dsync pull ws://home.example:8730/notes ~/notes --token-file ~/.dsync-token --stats\n  dsync pull ssh://me@home.example/srv/notes ~/notes --remote-dsync ~/.local/bin/dsync\n')
    .action((url: string, local: string, o: SyncCliOptions) => runSync('pull', local, url, o, ctx))
  addSessionOptions(
    program
      .command('sync')
      .description('two-way: bring a local directory and a served one to the same tree, each side\'s changes since their last sync going the other way')
      .argument('<local_dir>', 'directory to sync (created if missing)')
      .argument('<url>', URL_HELP)
      .option('-n, --dry-run', 'print the plan both ways (→ sent, ← received, ⇄ conflict, ✗ deleted); change nothing, not even state'),
  )
    .addOption(new Option('--prefer <side>', 'settle a file changed on both sides by taking this side\'s version (local, remote or newer) instead of keeping both').choices(['local', 'remote', 'newer']))
    .option('--no-delete', 'do not make deletions on the other side: a file deleted on one side comes back from the other', undefined)
    .option('--machine <name>', 'this machine\'s name in conflict copies (default: the host name)')
    .addHelpText('after', TWO_WAY_HELP)
    .action((local: string, url: string, o: SyncCliOptions & { delete?: boolean }) => runSync('sync', local, url, { ...o, deletions: o.delete !== false }, ctx))
}

const TWO_WAY_HELP = `
How each path is settled (against the state of the last sync between these two trees):
  changed on one side only        its version goes to the other side (new, edit, mode, deletion)
  changed on both, the same way   nothing to do
  changed on both, differently    conflict: both kept; the newer keeps the name, the other is
                                  NAME.dsync-conflict-MACHINE-YYYYMMDD-HHMMSS.EXT on both sides
                                  (--prefer local|remote|newer: that version overwrites instead)
  deleted on one, changed on other the changed file is kept and comes back (a conflict)
  renamed on one, edited on other renamed on both, with the edit
Exit code 10 when a conflict was settled or a file failed.

Examples:
  dsync sync ~/notes ws://work.example:8730/notes --token-file ~/.dsync-token -v
  dsync sync -n ~/notes ws://work.example:8730/notes      # the plan, nothing changed
`
