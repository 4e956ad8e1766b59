"""The project's one jit decorator, and where numba keeps its on-disk cache.

Kernels are compiled with fixed options: nopython, on-disk cache (the app starts often), no
fastmath (the kernels must agree with the reference model to 1e-9, so IEEE semantics stay),
and numpy's error model: a division by zero gives inf or NaN instead of a per-division check
and exception, which the finiteness tests would catch.

The cache goes to the platformdirs user cache folder, because the installed package folder
may be read-only; it must be set before the first kernel is decorated. Within it, a kernel's
folder is named by a hash of the source it is compiled from: its own module and every engine
module that module imports, transitively (``kernel_source_files``). numba checks a cached
kernel against its own file only, not against the constants it froze in from other modules
(the table layouts, the fit and warning codes) nor the kernels of other files it inlines, so a
change to any of those must compile afresh; a change to a module no kernel module imports (the
text, the studies without kernels) recompiles nothing.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import re
import threading
from pathlib import Path

import numba
import numba.core.dispatcher
import platformdirs
from numba.core import types

ENGINE_FOLDER = Path(__file__).resolve().parent.parent
ENGINE_PACKAGE = ("accelscope", "engine")  # the installed name of ENGINE_FOLDER


@functools.lru_cache(maxsize=None)
def _engine_modules(folder: Path) -> dict[tuple[str, ...], Path]:
    """Every module of the engine by its name relative to the engine (a package by its own)."""
    modules = {}
    for path in folder.rglob("*.py"):
        parts = path.relative_to(folder).with_suffix("").parts
        modules[parts[:-1] if parts[-1] == "__init__" else parts] = path
    return modules


# An import statement at the start of a line: ``from X import names`` (names parenthesised over
# several lines, or to the end of the line) or ``import X, Y``. Read with a pattern rather than
# ``ast``, which took ~0.5 s (two cores, busy) to parse the ~35 files the kernels import, at
# every start; the tests hold what it finds to what ``ast`` finds, for every engine file.
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;]*)|import[ \t]+([^\n;]*))", re.M
)
_COMMENT = re.compile(r"#[^\n]*")


def _engine_module(dotted: str) -> tuple[str, ...] | None:
    """``accelscope.engine.a.b`` as ``("a", "b")``; None for a module outside the engine."""
    parts = tuple(dotted.split("."))
    return parts[len(ENGINE_PACKAGE):] if parts[: len(ENGINE_PACKAGE)] == ENGINE_PACKAGE else None


def _imports(source: str, package: tuple[str, ...]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(engine module, names imported from it) for each import in ``source``, a module of
    ``package``; ``import M`` imports no names."""
    source = _COMMENT.sub("", source.replace("\\\n", " "))
    found = []
    for module, names, plain in _IMPORT.findall(source):
        if plain:
            for item in plain.split(","):
                dotted = item.split()[0] if item.split() else ""
                if (engine := _engine_module(dotted)) is not None:
                    found.append((engine, ()))
            continue
        words = (item.split() for item in names.strip("()").split(","))
        names = tuple(word[0] for word in words if word and word[0] != "*")
        level = len(module) - len(module.lstrip("."))
        if level:
            relative = module[level:]
            found.append(((*package[: len(package) - (level - 1)], *(relative.split(".") if relative else ())), names))
        elif (engine := _engine_module(module)) is not None:
            found.append((engine, names))
    return found


@functools.lru_cache(maxsize=None)
def imported_engine_files(path: Path, folder: Path = ENGINE_FOLDER) -> tuple[Path, ...]:
    """The engine files that the module at ``path`` imports, read from its source: every import
    statement, at any depth (more than its kernels can read, never less). ``from package import
    name`` counts the module ``name`` where it is one, else the package's own file."""
    package = path.relative_to(folder).with_suffix("").parts[:-1]  # an __init__ is its own package
    modules = _engine_modules(folder)
    found: list[Path] = []
    for module, names in _imports(path.read_text(encoding="utf-8"), package):
        submodules = [file for name in names if (file := modules.get((*module, name)))]
        own = modules.get(module)
        if own is not None and len(submodules) < max(len(names), 1):  # names read from the module itself
            found.append(own)
        found += submodules
    return tuple(dict.fromkeys(found))


@functools.lru_cache(maxsize=None)
def kernel_source_files(path: Path, folder: Path = ENGINE_FOLDER) -> tuple[Path, ...]:
    """The module at ``path`` and every engine module it imports, transitively, in a fixed order:
    all that a kernel defined there can freeze in or inline."""
    seen = {path}
    pending = [path]
    while pending:
        for imported in imported_engine_files(pending.pop(), folder):
            if imported not in seen:
                seen.add(imported)
                pending.append(imported)
    return tuple(sorted(seen, key=lambda file: file.relative_to(folder).as_posix()))


@functools.lru_cache(maxsize=None)
def kernel_source_digest(path: Path, folder: Path = ENGINE_FOLDER) -> str:
    """A short hash of ``kernel_source_files(path)``, by relative path and content."""
    digest = hashlib.sha256()
    for file in kernel_source_files(path, folder):
        digest.update(file.relative_to(folder).as_posix().encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


# Kept in a module global rather than the environment, so that child processes (which inherit
# NUMBA_CACHE_DIR) key their own folders the same way instead of nesting them.
CACHE_BASE = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(platformdirs.user_cache_dir("accelscope"), "numba")
# Where any cached function not made by ``jit`` would go: not the install folder.
numba.config.CACHE_DIR = CACHE_BASE
_decorating = threading.Lock()

JIT_OPTIONS = {"nopython": True, "cache": True, "fastmath": False, "nogil": True, "error_model": "numpy"}


# A stage called only from other kernels needs no wrapper for calls from Python: making one for
# a function of many array arguments (a simulator's state) costs most of its compile time.
INTERNAL_OPTIONS = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def kernel_cache_folder(function) -> str:
    """The cache folder of a kernel: keyed by the source of the module that defines it."""
    return os.path.join(CACHE_BASE, kernel_source_digest(Path(inspect.getfile(function)).resolve()))


def _compile(function, options: dict):
    # numba reads its cache folder once, when the decorator enables caching.
    with _decorating:
        shared = numba.config.CACHE_DIR
        numba.config.CACHE_DIR = kernel_cache_folder(function)
        try:
            return numba.jit(**options)(function)
        finally:
            numba.config.CACHE_DIR = shared


def jit(function=None, *, inline: bool = False, internal: bool = False):
    """Compile ``function`` with the project's options. ``inline=True`` (as ``@jit(inline=True)``)
    has numba inline the function into its callers, for a helper whose call would otherwise
    cost more than its body (see kernels/helpers.py). ``internal=True`` makes a function only
    other kernels can call (with NUMBA_DISABLE_JIT it stays a Python function as any other)."""
    options = dict(JIT_OPTIONS, inline="always") if inline else dict(JIT_OPTIONS)
    if internal:
        options.update(INTERNAL_OPTIONS)

    def compile_lazily(function):
        dispatcher = _compile(function, options)
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
