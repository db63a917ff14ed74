"""Ends a process whose parent is gone, so nothing keeps running after ShardLens (or torchrun) was killed.

A daemon thread polls ``os.getppid()``: when the parent exits, the process is re-parented and the id changes. The
parent to expect comes from the environment (ShardLens sets SHARDLENS_PARENT_PID for torchrun; torchrun_compat.py
sets SHARDLENS_LAUNCHER_PID for the ranks), so a parent that died before the watchdog started is noticed too. The
torchrun launcher, which leads its own process group, then kills that group; a rank exits. Polling works after
SIGKILL of the parent, which no signal handler can see.
"""
import os
import signal
import sys
import threading
import time


def _expected(env_var):
    try:
        return int(os.environ.get(env_var, ""))
    except ValueError:
        return os.getppid()


def _stop(kill_group):
    try:
        sys.stderr.write("shardlens-probe: the launching process is gone; stopping\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # The reader of stderr died with the parent (a broken pipe): stop all the same.
        pass
    if kill_group and os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(143)


def watch_parent(env_var, kill_group=False, interval=1.0):
    """Starts the watchdog thread; the parent's pid is read from ``env_var`` (else the current parent)."""
    parent = _expected(env_var)

    def run():
        while True:
            if os.getppid() != parent:
                _stop(kill_group)
            time.sleep(interval)

    threading.Thread(target=run, name="shardlens-parent-watchdog", daemon=True).start()
