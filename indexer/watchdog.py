"""The leader of every analyzer's process group: it runs the analyzer and ends the group if the indexer dies.

Run as a script, never imported by the product: ``python -I -S watchdog.py FD REPORT COMMAND...``. FD is the
read end of a pipe whose only write end the indexer holds (close-on-exec, never inherited). The kernel
closes that end however the indexer dies, SIGKILL included, so end-of-file on FD means "the indexer is
gone": the watchdog then SIGKILLs its own process group, the analyzer and everything it started. There is
no window: a pipe whose writer died before the watchdog looked reads end-of-file at once.

REPORT is a pipe the indexer reads to end-of-file: the watchdog closes it once the analyzer runs, or
first writes the errno of an exec that failed (the indexer raises it as Popen would have). Otherwise
the watchdog is transparent: the analyzer inherits its stdin, stdout, stderr, working
directory and environment, and the watchdog exits as the analyzer did (the same code, or the same
signal), so callers see the analyzer's own status.
"""

from __future__ import annotations

import os
import select
import signal
import sys


def main(argv: list[str]) -> int:
    fd, report = int(argv[0]), int(argv[1])
    command = argv[2:]
    for own in (fd, report):
        os.set_inheritable(own, False)  # the analyzer must hold neither pipe
    exec_r, exec_w = os.pipe()  # close-on-exec: end of file when the exec succeeded
    pid = os.fork()
    if pid == 0:  # the analyzer, in the watchdog's process group
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(exec_w, str(exc.errno or 8).encode())  # ENOEXEC when the OS gave no number
        os._exit(127)
    os.close(exec_w)
    failure = os.read(exec_r, 16)
    os.close(exec_r)
    if failure:
        os.write(report, failure)
        os.waitpid(pid, 0)
        return 127
    os.close(report)
    child = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.register(child, select.POLLIN)
    while True:
        ready = {ready_fd for ready_fd, _ in poller.poll()}
        if child in ready:
            break
        if fd in ready and not os.read(fd, 64):  # end of file: the indexer is gone
            os.killpg(0, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
