"""The project's one jit decorator, and where numba keeps its on-disk cache.

Kernels are compiled with fixed options: nopython, on-disk cache (the app starts often), no
fastmath (the kernels must agree with the reference model to 1e-9, so IEEE semantics stay),
and numpy's error model: a division by zero gives inf or NaN instead of a per-division check
and exception, which the finiteness tests would catch.

The cache goes to the platformdirs user cache folder, because the installed package folder
may be read-only; it must be set before the first kernel is decorated. Within it, the folder is
named by a hash of the engine's source files: numba checks a cached kernel against its own
file only, not against the constants it froze in from other modules (the table layouts, the
fit and warning codes), so any change to the engine's source compiles afresh instead of
loading kernels built from older constants.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
import numba.core.dispatcher
import platformdirs
from numba.core import types

ENGINE_FOLDER = Path(__file__).resolve().parent.parent


def engine_source_digest(folder: Path = ENGINE_FOLDER) -> str:
    """A short hash of every .py file of the engine, by relative path and content."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


# Set in numba's configuration rather than in the environment, so that child processes
# (which inherit NUMBA_CACHE_DIR) key their own folder the same way instead of nesting it.
CACHE_BASE = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(platformdirs.user_cache_dir("accelscope"), "numba")
numba.config.CACHE_DIR = os.path.join(CACHE_BASE, engine_source_digest())

JIT_OPTIONS = {"nopython": True, "cache": True, "fastmath": False, "nogil": True, "error_model": "numpy"}


# A stage called only from other kernels needs no wrapper for calls from Python: making one for
# a function of many array arguments (a simulator's state) costs most of its compile time.
INTERNAL_OPTIONS = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def jit(function=None, *, inline: bool = False, internal: bool = False):
    """Compile ``function`` with the project's options. ``inline=True`` (as ``@jit(inline=True)``)
    has numba inline the function into its callers, for a helper whose call would otherwise
    cost more than its body (see kernels/helpers.py). ``internal=True`` makes a function only
    other kernels can call (with NUMBA_DISABLE_JIT it stays a Python function as any other)."""
    options = dict(JIT_OPTIONS, inline="always") if inline else dict(JIT_OPTIONS)
    if internal:
        options.update(INTERNAL_OPTIONS)

    def compile_lazily(function):
        dispatcher = numba.jit(**options)(function)
        if not inline and isinstance(dispatcher, numba.core.dispatcher.Dispatcher):
            _one_version_per_type(dispatcher)
        return dispatcher

    return compile_lazily if function is None else compile_lazily(function)


def _one_version_per_type(dispatcher):
    """Have calls from other kernels type constant arguments by their type, not their value.

    Numba types a constant argument of a call between kernels (a table's column, a flag) as a
    literal and compiles a version of the callee for each value: a helper called with five
    columns was compiled five times. Calls from Python are typed by type already.
    """
    template_for = dispatcher.get_call_template

    def get_call_template(args, kws):
        return template_for(tuple(types.unliteral(arg) for arg in args),
                            {name: types.unliteral(arg) for name, arg in kws.items()})

    dispatcher.get_call_template = get_call_template
