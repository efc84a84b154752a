#!/usr/bin/python3 -I
"""Process 1 of a runner container.

Runs its arguments as the one child, forwards termination signals to it, reaps every
orphan, and exits as the child did (128 + the signal when a signal ended it). It makes
itself non-dumpable first: the kernel then owns its /proc entries, so a command (same
uid, no capabilities) reading /proc/1/environ gets EACCES instead of the environment
the container was started with. The child's execve makes the command dumpable again,
so its own /proc/self stays readable.
"""

import ctypes
import os
import signal
import sys

PR_SET_DUMPABLE = 4
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
             signal.SIGUSR1, signal.SIGUSR2)


def main() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        print("memql-runner-init: prctl(PR_SET_DUMPABLE) failed", file=sys.stderr)
        return 126
    argv = sys.argv[1:] or ["/bin/bash"]
    child = os.fork()
    if child == 0:
        # Python ignores SIGPIPE and SIGXFSZ; a command expects the defaults.
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as err:
            print(f"memql-runner-init: {argv[0]}: {err.strerror}", file=sys.stderr)
            os._exit(127 if isinstance(err, FileNotFoundError) else 126)
    for sig in FORWARDED:
        signal.signal(sig, lambda signum, _frame: os.kill(child, signum))
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
