"""The project's one jit decorator, and where numba keeps its on-disk cache.

Kernels are compiled with fixed options: nopython, on-disk cache (the app starts often), no
fastmath (the kernels must agree with the reference model to 1e-9, so IEEE semantics stay),
and numpy's error model: a division by zero gives inf or NaN instead of a per-division check
and exception, which the finiteness tests would catch.
The cache goes to the platformdirs user cache folder, because the installed package folder
may be read-only; this must happen before numba is first imported.
"""

from __future__ import annotations

import os

if "NUMBA_CACHE_DIR" not in os.environ:
    import platformdirs

    os.environ["NUMBA_CACHE_DIR"] = os.path.join(platformdirs.user_cache_dir("accelscope"), "numba")

import numba  # noqa: E402  (the cache folder must be set first)

JIT_OPTIONS = {"nopython": True, "cache": True, "fastmath": False, "nogil": True, "error_model": "numpy"}


def jit(function):
    """Compile ``function`` with the project's options."""
    return numba.jit(**JIT_OPTIONS)(function)
