#!/bin/sh
# Stands in for ssh in tests (`-e 'sh test/support/local-rsh.sh'`): takes ssh's arguments
# ([-p PORT] [other options] DESTINATION COMMAND), drops the options and the destination, and
# runs the remote command here, through a shell as sshd would. `--pidfile FILE` (first) writes
# the pid of the process that becomes the remote dsync, so a test can kill it mid-session.
if [ "$1" = --pidfile ]; then echo $$ > "$2"; shift 2; fi
while [ $# -gt 0 ]; do
  case $1 in
    -p|-l|-i|-o|-F) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
shift # the destination
# exec: the remote command replaces this shell, so killing this pid kills the remote dsync.
eval "exec $*"
