"""With the suite spread over xdist workers (``pytest -n 2``): each kernel is compiled by one
worker, and the others load it from numba's on-disk cache.

Into an empty cache, every worker would otherwise compile every kernel it calls, at about the
same time (the physics kernel ~40 s, the serving simulator ~150 s, on two cores). Here a
worker about to compile a kernel first takes a lock of that kernel's own, held across
processes; one that finds it taken waits, and then numba finds the kernel in its cache. The
other worker meanwhile runs tests that need something else.

Only a compile started from Python takes a lock: the kernels it calls are compiled inside it,
under its lock. A thread waiting for a lock holds no other (neither a kernel's nor numba's own
compiler lock), so no two can wait for each other.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading

from numba.core.dispatcher import Dispatcher

_inside = threading.local()  # this thread is compiling: what it compiles now is a callee


def compile_once_across_workers(folder: str) -> None:
    """Wraps numba's compile of a signature not compiled in this process yet (Dispatcher.compile)."""
    os.makedirs(folder, exist_ok=True)
    compile_here = Dispatcher.compile

    def compile_once(self, sig):
        if getattr(_inside, "compiling", False):
            return compile_here(self, sig)
        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}:{self.py_func.__code__.co_filename}"
        path = os.path.join(folder, hashlib.sha256(name.encode()).hexdigest()[:16] + ".lock")
        with open(path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
            _inside.compiling = True
            try:
                return compile_here(self, sig)  # from the cache, if another worker compiled it meanwhile
            finally:
                _inside.compiling = False

    Dispatcher.compile = compile_once
