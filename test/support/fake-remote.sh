#!/bin/sh
# A remote shell that misbehaves, for tests: `sh fake-remote.sh MODE [ssh args...]`.
#   exit127  the remote shell cannot find the command (what ssh reports for a missing dsync)
#   exit255  ssh itself failed (cannot connect, authentication refused)
#   garbage  prints text on stdout, as a login banner or a shell rc file might
#   huge     announces a 4 GiB frame
#   silent   reads its input and says nothing until its input ends
case $1 in
  exit127) echo "sh: 1: dsync: not found" >&2; exit 127 ;;
  exit255) echo "ssh: connect to host nowhere port 22: Connection refused" >&2; exit 255 ;;
  garbage) echo "Welcome to the remote host! Have a nice day."; cat > /dev/null ;;
  huge) printf '\377\377\377\360'; cat > /dev/null ;;
  silent) cat > /dev/null ;;
esac
