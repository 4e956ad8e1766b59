"""The kernels' on-disk cache is keyed by the source each kernel is compiled from (``physics/jit.py``):
its own module and every engine module it imports, transitively. An edit to any of them gives
the kernel a new folder (numba would otherwise load machine code that froze in old constants or
inlined an old helper); an edit anywhere else recompiles nothing."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import shutil
import types
from pathlib import Path

import numba
import pytest

import accelscope.engine
from accelscope.engine.physics import jit

ENGINE = jit.ENGINE_FOLDER


def ast_imports(path: Path) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """What the jit module's pattern must find in ``path``, read by Python's own parser."""
    package = path.relative_to(ENGINE).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = tuple(alias.name.split("."))
                if parts[:2] == ("accelscope", "engine"):
                    found.add((parts[2:], ()))
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names if alias.name != "*")
            module = tuple(node.module.split(".")) if node.module else ()
            if node.level:
                found.add(((*package[: len(package) - (node.level - 1)], *module), names))
            elif module[:2] == ("accelscope", "engine"):
                found.add((module[2:], names))
    return found


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=lambda path: path.relative_to(ENGINE).as_posix())
def test_the_import_reader_finds_every_import_the_parser_finds(path):
    package = path.relative_to(ENGINE).with_suffix("").parts[:-1]
    read = set(jit._imports(path.read_text(encoding="utf-8"), package))
    assert ast_imports(path) <= read


def kernels() -> list:
    """Every jit kernel of the engine, each from the module that defines it."""
    found = {}
    for info in pkgutil.walk_packages(accelscope.engine.__path__, "accelscope.engine."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, numba.core.registry.CPUDispatcher) and value.py_func.__module__ == info.name:
                found[value.py_func.__qualname__, info.name] = value
    return list(found.values())


KERNELS = kernels()


def test_the_engine_has_kernels_in_several_modules():
    assert len({kernel.py_func.__module__ for kernel in KERNELS}) >= 4


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: f"{kernel.py_func.__module__}.{kernel.__name__}")
def test_every_kernel_is_cached_in_the_folder_of_its_source(kernel):
    folder = Path(jit.kernel_cache_folder(kernel.py_func))
    assert folder.parent == Path(jit.CACHE_BASE)
    assert folder.name == jit.kernel_source_digest(Path(inspect.getfile(kernel.py_func)).resolve())
    assert Path(kernel._cache._cache_path).parent == folder


def code_objects(code: types.CodeType):
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from code_objects(constant)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda kernel: f"{kernel.py_func.__module__}.{kernel.__name__}")
def test_a_kernels_key_holds_every_module_and_function_it_reads(kernel):
    """The functions and modules a kernel's code names (other kernels, inlined helpers) come
    from files of its key; constants reach it by the imports the test above holds to."""
    files = set(jit.kernel_source_files(Path(inspect.getfile(kernel.py_func)).resolve()))
    names = {name for code in code_objects(kernel.py_func.__code__) for name in code.co_names}
    for name in names & set(kernel.py_func.__globals__):
        value = kernel.py_func.__globals__[name]
        value = getattr(value, "py_func", value)
        if isinstance(value, types.ModuleType | types.FunctionType):
            source = Path(inspect.getfile(value)).resolve()
            if source.is_relative_to(ENGINE):
                assert source in files, (name, source)


@pytest.fixture
def engine_copy(tmp_path):
    """A copy of the engine's source, to edit."""
    folder = tmp_path / "engine"
    shutil.copytree(ENGINE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


KERNEL_MODULES = {
    "evaluate": "physics/kernels/evaluate.py",
    "helpers": "physics/kernels/helpers.py",
    "moe": "studies/moe_routing.py",
    "serving": "studies/serving/kernel/loop.py",
}


def keys(folder: Path) -> dict[str, str]:
    jit.imported_engine_files.cache_clear()
    jit.kernel_source_files.cache_clear()
    jit.kernel_source_digest.cache_clear()
    jit._engine_modules.cache_clear()
    return {name: jit.kernel_source_digest(folder / path, folder) for name, path in KERNEL_MODULES.items()}


def changed_after(folder: Path, path: str, old: str, new: str) -> set[str]:
    before = keys(folder)
    source = (folder / path).read_text(encoding="utf-8")
    assert old in source, (path, old)
    (folder / path).write_text(source.replace(old, new, 1), encoding="utf-8")
    after = keys(folder)
    return {name for name in before if after[name] != before[name]}


def test_a_constant_frozen_in_from_another_module_gives_its_kernels_a_new_folder(engine_copy):
    # A fit code (core/codes.py) is read by the physics kernels and the serving kernel that inlines them.
    edited = changed_after(engine_copy, "core/codes.py", "FIT_FAR_TIER_TOO_SMALL = 8", "FIT_FAR_TIER_TOO_SMALL = 9")
    assert {"evaluate", "helpers", "serving"} <= edited
    # A constant of the table layouts (physics/layout.py) likewise.
    edited = changed_after(engine_copy, "physics/layout.py", "MAX_BATCH_REPORTED = 1e15", "MAX_BATCH_REPORTED = 1e16")
    assert {"evaluate", "helpers", "serving"} <= edited


def test_a_helper_inlined_elsewhere_gives_its_callers_a_new_folder(engine_copy):
    edited = changed_after(engine_copy, "physics/kernels/helpers.py", "def ", "def  ")
    assert {"evaluate", "helpers", "serving"} <= edited


def test_an_edit_no_kernel_reads_recompiles_nothing(engine_copy):
    assert changed_after(engine_copy, "text/compare.py", '"""', '""" ') == set()
    assert changed_after(engine_copy, "studies/scaling.py", '"""', '""" ') == set()
    assert changed_after(engine_copy, "physics/engine.py", '"""', '""" ') == set()


def test_an_edit_of_one_kernel_module_leaves_the_others_compiled(engine_copy):
    assert changed_after(engine_copy, "studies/serving/kernel/loop.py", '"""', '""" ') == {"serving"}
    assert changed_after(engine_copy, "studies/moe_routing.py", '"""', '""" ') == {"moe"}
