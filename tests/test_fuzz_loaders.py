"""Structured fuzzing of the loaders of untrusted files: presets, accelerator and model TOMLs,
Hugging Face config.json files, and the table of published measurements.

Each input starts from a valid document (the bundled presets, accelerators and models, and the
config.json fixtures) and is mutated: keys deleted or added, values of the wrong type, huge,
negative, NaN or infinite numbers, deep nesting, long and odd unicode strings, bytes truncated
or corrupted, duplicate keys, other encodings, files over the size limit. The only acceptable
outcomes are a valid object (one the engine can evaluate without an exception) or the loader's
own error naming the file and the problem on one line; nothing on disk may change.

The default suite tries 1,000 inputs per loader; ``pytest -m slow tests/test_fuzz_loaders.py``
tries ``ACCELSCOPE_FUZZ_COUNT`` (default 10,000) per loader with another seed
(``ACCELSCOPE_FUZZ_SEED``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import random
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from accelscope.engine.catalog import Catalog, user_data_dir
from accelscope.engine.catalog.accelerators import bundled_accelerator_files, load_accelerator_file
from accelscope.engine.catalog.hf_config import load_hf_config
from accelscope.engine.catalog.measurements import MeasurementTable, load_measurements
from accelscope.engine.catalog.models import bundled_model_files, load_model_file
from accelscope.engine.catalog.presets import MAX_PRESET_BYTES, Preset, PresetError, bundled_preset_files, load_preset
from accelscope.engine.catalog.reading import MAX_FILE_BYTES
from accelscope.engine.core.accelerator import Accelerator
from accelscope.engine.core.errors import CatalogError
from accelscope.engine.core.model import ModelArch
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.reference import ReferenceModel
from accelscope.engine.validation.served import SERVED_SEEDS, served_spec, server_spec

FAST_COUNT = 1000
SLOW_COUNT = int(os.environ.get("ACCELSCOPE_FUZZ_COUNT", "10000"))
FAST_SEED = 20260522
SLOW_SEED = int(os.environ.get("ACCELSCOPE_FUZZ_SEED", str(FAST_SEED + 1)))

TESTS = Path(__file__).parent
MAX_MESSAGE_CHARS = 2000  # beyond the path: an error is read by a person, on one line


# ---- serialising documents -----------------------------------------------------------


def toml_string(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:  # TOML text is UTF-8: no lone surrogates
            out.append("\ufffd")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value if item is not None) + "]"
    if isinstance(value, dict):
        items = (f"{toml_string(key)} = {toml_value(item)}" for key, item in value.items() if item is not None)
        return "{" + ", ".join(items) + "}"
    return toml_string(str(value))


def to_toml(document: Any) -> str:
    """A minimal TOML writer: every table inline (TOML has no null: None drops the key)."""
    if not isinstance(document, dict):
        return f'"value" = {toml_value(document)}\n'
    lines = (f"{toml_string(key)} = {toml_value(value)}\n" for key, value in document.items() if value is not None)
    return "".join(lines)


def to_json(document: Any, rng: random.Random) -> str:
    return json.dumps(document, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]), allow_nan=True)


# ---- the valid documents fuzzing starts from ----------------------------------------


@dataclass(frozen=True)
class Seed:
    name: str
    text: str
    document: Any


def _seeds(paths: list[Path], parse: Callable[[str], Any]) -> list[Seed]:
    seeds = []
    for path in paths:
        text = Path(str(path)).read_text(encoding="utf-8")
        seeds.append(Seed(Path(str(path)).name, text, parse(text)))
    return seeds


def preset_seeds() -> list[Seed]:
    kept = sorted((TESTS / "fixtures" / "presets").glob("*.json"))
    paths = [Path(str(entry)) for entry in bundled_preset_files()] + kept
    return _seeds(paths, json.loads)


def accelerator_seeds() -> list[Seed]:
    return _seeds(bundled_accelerator_files(), tomllib.loads)


def model_seeds() -> list[Seed]:
    return _seeds([Path(str(entry)) for entry in bundled_model_files()], tomllib.loads)


def hf_seeds() -> list[Seed]:
    return _seeds(sorted((TESTS / "fixtures" / "hf").glob("*/config.json")), json.loads)


def measurement_seeds() -> list[Seed]:
    # A small table with every kind of workload and row: the bundled one takes 0.1 s to load.
    return _seeds(sorted((TESTS / "fixtures" / "measurements").glob("*.toml")), tomllib.loads)


# ---- mutations -----------------------------------------------------------------------

ODD_STRINGS = (
    "",
    " ",
    "\t\n",
    "\x00",
    "\u202eevil",  # right-to-left override
    "e\u0301\u0301\u0301",  # combining marks
    "\U0001f600" * 50,
    "\ud800",  # lone surrogate: not encodable as UTF-8
    "NaN",
    "1e9",
    "-1",
    "true",
    "H100-SXM",
    "../../etc/passwd",
    "a" * 100_000,
    "line\nbreak",
    "\u2028\u2029",
    "\ufeff",
    "accelscope.preset/999999",
    "accelscope.preset/0",
    "accelscope.preset/1 ",
)
ODD_NUMBERS = (
    0,
    -1,
    1,
    2,
    -0.0,
    0.5,
    1.5,
    2**31,
    2**53 + 1,
    2**63,
    -(2**63),
    10**400,
    1e308,
    -1e308,
    5e-324,
    1e-300,
    math.nan,
    math.inf,
    -math.inf,
)


def hostile_value(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.4:
        return rng.choice(ODD_NUMBERS)
    if kind < 0.7:
        return rng.choice(ODD_STRINGS)
    if kind < 0.8:
        return rng.choice([None, True, False, [], {}, [1, "x", None], {"value": None}])
    if kind < 0.9:
        return nested(rng.choice([2, 20]), rng)
    return 10 ** rng.randint(0, 30) * rng.choice([1, -1]) * rng.choice([1, 1.0])


# Stands for nesting too deep to build as Python objects; replaced in the serialised text.
DEEP = "\x00deep\x00"
DEEP_TEXT = "[" * 3000 + "{}" + "]" * 3000


def nested(depth: int, rng: random.Random) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def containers(document: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every dict and list in the document, with its path."""
    if isinstance(document, dict | list):
        yield path, document
        items = document.items() if isinstance(document, dict) else enumerate(document)
        for key, value in items:
            yield from containers(value, (*path, key))


def perturb(value: Any, rng: random.Random) -> Any:
    """A near miss of a valid value: often still valid, often just out of range."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int) and abs(value) < 10**300:
        return rng.choice([value + 1, value - 1, -value, value * 2, value * 10**6, 0, float(value), str(value)])
    if isinstance(value, float) and math.isfinite(value):
        return rng.choice([value * 1.5, value / 1e6, -value, value * 1e300, 0.0, int(value), str(value)])
    if isinstance(value, str):
        return rng.choice([value.upper(), value + "x", value[:-1], value * 3, "", value + "\u0301"])
    return hostile_value(rng)


def mutate_structure(document: Any, rng: random.Random) -> tuple[Any, list[str]]:
    document = copy.deepcopy(document)
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        places = list(containers(document))
        if not places:
            break
        path, container = rng.choice(places)
        keys = list(container) if isinstance(container, dict) else list(range(len(container)))
        action = rng.random()
        if not keys or action < 0.1:
            if isinstance(container, dict):
                key: Any = rng.choice(["extra", "id", "value", "\U0001f600", "a" * 300, "x\ny"])
                container[key] = hostile_value(rng)
            else:
                key = len(container)
                container.append(rng.choice([hostile_value(rng), copy.deepcopy(container[-1]) if container else 1]))
            done.append(f"add {path}/{key!r:.40}")
            continue
        key = rng.choice(keys)
        if action < 0.3:
            del container[key]
            done.append(f"delete {path}/{key!r:.40}")
        elif action < 0.6:
            container[key] = perturb(container[key], rng)
            done.append(f"perturb {path}/{key!r:.40}")
        elif action < 0.9:
            container[key] = hostile_value(rng)
            done.append(f"replace {path}/{key!r:.40}")
        else:
            container[key] = DEEP if rng.random() < 0.5 else nested(40, rng)
            done.append(f"nest {path}/{key!r:.40}")
    return document, done


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    action = rng.random()
    if action < 0.3:
        cut = rng.randrange(len(data) + 1)
        return data[:cut], f"truncate at {cut}"
    if action < 0.45:
        data = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), "flip bytes"
    if action < 0.55:
        at = rng.randrange(len(data) + 1)
        random_bytes = bytes(rng.randrange(256) for _ in range(16))
        garbage = rng.choice([b"\xff\xfe", b"\xc3", b"\x00", b"\xed\xa0\x80", random_bytes])
        return data[:at] + garbage + data[at:], "insert invalid bytes"
    if action < 0.7:
        lines = data.split(b"\n")
        index = rng.randrange(len(lines))
        lines.insert(index, lines[index])  # a duplicate key (or a duplicate header)
        return b"\n".join(lines), f"duplicate line {index}"
    if action < 0.8:
        lines = data.split(b"\n")
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines), "delete a line"
    text = data.decode("utf-8", errors="surrogatepass")
    encoding = rng.choice(["utf-16", "utf-32", "latin-1", "utf-8-sig", "cp1252"])
    return text.encode(encoding, errors="replace"), f"encode as {encoding}"


def special_input(kind: str, rng: random.Random, limit: int) -> tuple[bytes, str]:
    if kind == "json":
        top = rng.choice([b"[]", b'"text"', b"42", b"null", b"true", b"NaN", b"-Infinity", b"{}", b'{"a": 1, "a": 2}'])
        deep = b"[" * 100_000 + b"]" * 100_000
        big_int = b'{"x": ' + b"9" * 10_000 + b"}"
    else:
        top = rng.choice([b"x", b"= 1", b"[table", b"a = 1\na = 2", b"[[memory]]\n", b"a = { b = 1 }\na.b = 2"])
        deep = b"x = " + b"[" * 100_000 + b"]" * 100_000
        big_int = b"x = " + b"9" * 10_000
    choice = rng.random()
    if choice < 0.05:
        return b" " * (limit + 1), "over the size limit"
    if choice < 0.1:
        return b"\n" * (limit // 2), "large but within the limit"
    options = [
        (b"", "empty"),
        (b" \n\t ", "whitespace"),
        (b"\x00" * 64, "NUL bytes"),
        (bytes(rng.randrange(256) for _ in range(rng.randrange(1, 512))), "random bytes"),
        (top, "odd top level"),
        (deep, "nested 100,000 deep"),
        (big_int, "a 10,000-digit integer"),
    ]
    return rng.choice(options)


def fuzz_input(seed: Seed, kind: str, rng: random.Random, limit: int) -> tuple[bytes, str]:
    """One malformed (or, by chance, still valid) input and what was done to it."""
    mode = rng.random()
    if mode < 0.6:
        document, done = mutate_structure(seed.document, rng)
        text = to_json(document, rng) if kind == "json" else to_toml(document)
        text = text.replace(json.dumps(DEEP) if kind == "json" else toml_string(DEEP), DEEP_TEXT)
        return text.encode("utf-8", errors="surrogatepass"), f"{seed.name}: {'; '.join(done)}"
    if mode < 0.92:
        data, done = mutate_bytes(seed.text.encode("utf-8"), rng)
        return data, f"{seed.name}: {done}"
    data, done = special_input(kind, rng, limit)
    return data, done


# ---- checking one outcome ------------------------------------------------------------


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            digest.update(str(path.relative_to(folder)).encode("utf-8", errors="surrogatepass"))
            if path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def folder_state(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def check_rejection(error: Exception, path: Path, error_type: type[CatalogError]) -> str | None:
    """None if the error is the loader's own, naming the file and the problem on one line."""
    if not isinstance(error, error_type):
        return f"raised {type(error).__name__}: {str(error)[:200]}"
    message = str(error)
    if error.path != str(path) or not message.startswith(str(path)):
        return f"does not name the file: {message[:200]!r}"
    if not error.problem.strip():
        return f"names no problem: {message[:200]!r}"
    if any(char in message for char in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        return f"is not one line: {message[:200]!r}"
    if len(message) - len(str(path)) > MAX_MESSAGE_CHARS:
        return f"is {len(message):,} characters long: {message[:200]!r}"
    return None


@dataclass
class Tally:
    tried: int = 0
    accepted: int = 0
    rejected: int = 0
    failures: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def small_catalog(engine):
    """What accepted objects are evaluated against: a few models and accelerators."""
    models = {key: engine.catalog.models[key] for key in ("llama-3.1-8b", "mixtral-8x7b", "deepseek-r1")}
    accelerators = {key: engine.catalog.accelerators[key] for key in ("h100-sxm", "groq-lpu", "sn40l")}
    return models, accelerators


def evaluate_everywhere(models: dict[str, ModelArch], accelerators: dict[str, Accelerator], engine: Engine) -> None:
    """The kernels and the reference evaluate every pair without an exception (an accepted
    file must never break the app)."""
    fresh = Engine(Catalog(dict(accelerators), dict(models)), engine.constants)
    for model in models.values():
        for accelerator in accelerators.values():
            for scenario in (
                Scenario(model.id, accelerator.id),
                Scenario(model.id, accelerator.id, 64, 8192, tp=8, ep=8 if model.moe else 1, offload=0.5),
            ):
                fresh.predict(scenario)
                ReferenceModel(model, accelerator, engine.constants).evaluate(scenario)


def run_fuzz(
    loader: str,
    count: int,
    seed: int,
    folder: Path,
    engine: Engine,
    small_catalog: tuple[dict[str, ModelArch], dict[str, Accelerator]],
) -> Tally:
    spec = LOADERS[loader]
    seeds = spec.seeds()
    rng = random.Random(f"{loader}-{seed}")
    resources = Path(str(files("accelscope.resources")))
    presets = Path(str(files("accelscope.presets")))
    watched = [resources / "accelerators", resources / "models", presets, user_data_dir()]
    before = [tree_digest(path) for path in watched]
    tally = Tally()
    folder.mkdir()
    for index in range(count):
        data, what = fuzz_input(rng.choice(seeds), spec.kind, rng, spec.limit)
        name = spec.file_name(rng)
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        state = folder_state(path.parent)
        tally.tried += 1
        try:
            loaded = spec.load(path, engine)
        except Exception as error:  # noqa: BLE001 (judged below: only the loader's own error is acceptable)
            problem = check_rejection(error, path, spec.error)
            tally.rejected += 1
        else:
            tally.accepted += 1
            problem = spec.check(loaded, engine, small_catalog)
        if folder_state(path.parent) != state:
            problem = (problem + "; " if problem else "") + "changed the folder"
        if problem:
            tally.failures.append(f"#{index} ({what}) {name}: {problem}")
        path.unlink()
    after = [tree_digest(path) for path in watched]
    if after != before:
        tally.failures.append("the bundled catalog, presets or user data folder changed")
    return tally


# ---- the loaders --------------------------------------------------------------------


def check_accelerator(loaded: object, engine: Engine, small) -> str | None:
    if not isinstance(loaded, Accelerator):
        return f"returned {type(loaded).__name__}"
    models, _ = small
    try:
        evaluate_everywhere(models, {loaded.id: loaded}, engine)
    except Exception as error:  # noqa: BLE001 (any exception is the finding)
        return f"accepted, but the engine fails on it: {type(error).__name__}: {error}"
    return None


def check_model(loaded: object, engine: Engine, small) -> str | None:
    if not isinstance(loaded, ModelArch):
        return f"returned {type(loaded).__name__}"
    _, accelerators = small
    try:
        evaluate_everywhere({loaded.id: loaded}, accelerators, engine)
    except Exception as error:  # noqa: BLE001 (any exception is the finding)
        return f"accepted, but the engine fails on it: {type(error).__name__}: {error}"
    return None


def check_preset(loaded: object, engine: Engine, small) -> str | None:
    if not isinstance(loaded, Preset):
        return f"returned {type(loaded).__name__}"
    scenario = loaded.workspace.scenario
    try:
        scenario.validate()
        models = {scenario.model: loaded.model or engine.model(scenario.model)}
        accelerators = {key: engine.catalog.accelerator(key) for key in {scenario.accelerator, *loaded.workspace.shown}}
        evaluate_everywhere(models, accelerators, engine)
    except Exception as error:  # noqa: BLE001 (any exception is the finding)
        return f"accepted, but the engine fails on it: {type(error).__name__}: {error}"
    return None


def check_measurements(loaded: object, engine: Engine, small) -> str | None:
    """Every setup of an accepted table resolves, and every served run and server scenario it
    describes is a serving spec the simulator accepts (nothing is simulated here)."""
    if not isinstance(loaded, MeasurementTable):
        return f"returned {type(loaded).__name__}"
    try:
        for entry in (*loaded.measurements, *loaded.claims):
            for scenario in entry.spec.scenarios() if entry.spec is not None else ():
                engine.resolve(scenario)
        for workload in loaded.workloads.values():
            if workload.server is not None:
                for seed in SERVED_SEEDS:
                    server_spec(workload.requests, workload.server, seed).validate()
            elif workload.requests is not None:
                served_spec(workload.requests, 1, bool(workload.fixed_batch)).validate()
    except Exception as error:  # noqa: BLE001 (any exception is the finding)
        return f"accepted, but it cannot be run: {type(error).__name__}: {error}"
    return None


def hf_file_name(rng: random.Random) -> str:
    return rng.choice(
        ["config.json", "model.json", "odd folder/config.json", "models--org--name/snapshots/0a1b2c3/config.json",
         "0a1b2c3d/config.json", "-_-.json", "\u00e9\U0001f600.json", "A.B.C.json", "x" * 200 + ".json"]
    )


@dataclass(frozen=True)
class Loader:
    kind: str  # "json" or "toml"
    seeds: Callable[[], list[Seed]]
    load: Callable[[Path, Engine], object]
    check: Callable[[object, Engine, Any], str | None]
    error: type[CatalogError]
    limit: int
    file_name: Callable[[random.Random], str]


LOADERS: dict[str, Loader] = {
    "preset": Loader(
        "json", preset_seeds, lambda path, engine: load_preset(path, engine.catalog), check_preset,
        PresetError, MAX_PRESET_BYTES, lambda rng: "preset.json",
    ),
    "accelerator": Loader(
        "toml", accelerator_seeds, lambda path, engine: load_accelerator_file(path), check_accelerator,
        CatalogError, MAX_FILE_BYTES, lambda rng: "accelerator.toml",
    ),
    "model": Loader(
        "toml", model_seeds, lambda path, engine: load_model_file(path), check_model,
        CatalogError, MAX_FILE_BYTES, lambda rng: "model.toml",
    ),
    "hf-config": Loader(
        "json", hf_seeds, lambda path, engine: load_hf_config(path), check_model,
        CatalogError, MAX_FILE_BYTES, hf_file_name,
    ),
    "measurements": Loader(
        "toml", measurement_seeds, lambda path, engine: load_measurements(path, engine.catalog), check_measurements,
        CatalogError, MAX_FILE_BYTES, lambda rng: "measurements.toml",
    ),
}


def assert_no_failures(tally: Tally, loader: str) -> None:
    assert tally.tried > 0 and tally.accepted + tally.rejected == tally.tried
    shown = "\n".join(tally.failures[:20])
    assert not tally.failures, f"{loader}: {len(tally.failures)} of {tally.tried} inputs failed:\n{shown}"


@pytest.mark.parametrize("loader", list(LOADERS))
def test_malformed_files_are_refused_cleanly(loader, tmp_path, engine, small_catalog, record_property):
    tally = run_fuzz(loader, FAST_COUNT, FAST_SEED, tmp_path / "fuzz", engine, small_catalog)
    record_property("inputs", tally.tried)
    record_property("accepted", tally.accepted)
    assert_no_failures(tally, loader)


@pytest.mark.slow
@pytest.mark.parametrize("loader", list(LOADERS))
def test_malformed_files_are_refused_cleanly_long(loader, tmp_path, engine, small_catalog, record_property):
    tally = run_fuzz(loader, SLOW_COUNT, SLOW_SEED, tmp_path / "fuzz", engine, small_catalog)
    record_property("inputs", tally.tried)
    record_property("accepted", tally.accepted)
    assert_no_failures(tally, loader)


def test_the_seed_documents_load(engine):
    """Fuzzing starts from valid documents: each one loads as it is, written by the TOML and
    JSON writers above too (or the mutations would start from something already broken)."""
    for loader, spec in LOADERS.items():
        for seed in spec.seeds():
            text = to_json(seed.document, random.Random(0)) if spec.kind == "json" else to_toml(seed.document)
            assert spec.kind == "toml" or json.loads(text) == seed.document, (loader, seed.name)
            assert spec.kind == "json" or tomllib.loads(text) == seed.document, (loader, seed.name)


# ---- found by fuzzing ----------------------------------------------------------------


@pytest.mark.parametrize("loader", ["accelerator", "model"])
@pytest.mark.parametrize("nesting", ["[" * 5000 + "]" * 5000, "{a = " * 5000 + "1" + "}" * 5000])
def test_deeply_nested_toml_is_refused_by_name(loader, nesting, tmp_path):
    """tomllib recurses per nesting level: a deep array or inline table raised RecursionError
    out of the TOML loaders (the JSON readers already caught it)."""
    path = tmp_path / "deep.toml"
    path.write_text(f"id = {nesting}\n", encoding="utf-8")
    load = load_accelerator_file if loader == "accelerator" else load_model_file
    with pytest.raises(CatalogError, match="nested too deeply") as raised:
        load(path)
    assert raised.value.path == str(path)


def test_an_accelerator_with_only_a_far_tier_is_refused(tmp_path):
    """A file whose only placeable tier is far memory (host, CXL) loaded, and then every
    Engine() failed (the kernels need an on-chip or device tier to place weights in): one
    shared file in the user's folder broke every `accelscope predict` and the app."""
    text = (Path(str(files("accelscope.resources"))) / "accelerators" / "h100-sxm.toml").read_text(encoding="utf-8")
    edited = text.replace('name = "HBM3"\nplacement = true', 'name = "HBM3"\nplacement = false')
    assert edited != text
    path = tmp_path / "far-only.toml"
    path.write_text(edited, encoding="utf-8")
    with pytest.raises(CatalogError, match="on-chip or device tier") as raised:
        load_accelerator_file(path)
    assert raised.value.path == str(path) and raised.value.field == "memory"


def bundled_document(kind: str, name: str) -> dict[str, Any]:
    folder = files("accelscope.resources") / kind if kind != "presets" else files("accelscope.presets")
    text = (folder / name).read_text(encoding="utf-8")
    return json.loads(text) if name.endswith(".json") else tomllib.loads(text)


def hf_document(name: str) -> dict[str, Any]:
    return json.loads((TESTS / "fixtures" / "hf" / name / "config.json").read_text(encoding="utf-8"))


def write_document(tmp_path: Path, name: str, document: Any) -> Path:
    path = tmp_path / name
    text = to_toml(document) if name.endswith(".toml") else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return path


def refusal(load: Callable[[Path], object], path: Path, error_type: type[CatalogError] = CatalogError) -> CatalogError:
    with pytest.raises(error_type) as raised:
        load(path)
    problem = check_rejection(raised.value, path, error_type)
    assert problem is None, problem
    return raised.value


@pytest.mark.parametrize("load", [load_accelerator_file, load_model_file], ids=["accelerator", "model"])
def test_a_toml_integer_too_long_to_convert_is_refused(load, tmp_path):
    """tomllib lets Python's int() raise ValueError past 4,300 digits; it escaped the loaders."""
    path = tmp_path / "long.toml"
    path.write_text(f"id = {'9' * 5000}\n", encoding="utf-8")
    assert "not valid TOML" in str(refusal(load, path))


@pytest.mark.parametrize(
    "field", ["tdp_W", "interconnect.latency_s", "interconnect.domain_size", "memory.1.capacity_bytes"]
)
def test_an_accelerator_number_too_large_for_a_float_is_refused(field, tmp_path):
    """10**400 is a valid TOML integer; math.isfinite() and float() raised OverflowError on it,
    in the loader (numbers) or, for domain_size, which had no upper bound, in the engine."""
    document = bundled_document("accelerators", "h100-sxm.toml")
    table: Any = document
    for part in field.split("."):
        table = table[int(part)] if part.isdigit() else table[part]
    table["value"] = 10**400
    error = refusal(load_accelerator_file, write_document(tmp_path, "huge.toml", document))
    expected = field.replace(".1.", "[1].") if field.startswith("memory") else field
    assert error.field == f"{expected}.value"


def test_a_preset_offload_too_large_for_a_float_is_refused(tmp_path, catalog):
    document = bundled_document("presets", "teach-roofline-basics.json")
    document["parallel"]["offload"] = 10**400
    path = write_document(tmp_path, "huge.json", document)
    error = refusal(lambda p: load_preset(p, catalog), path, PresetError)
    assert error.field == "parallel.offload"


ODD_TEXTS = {"line break": "x\ny", "line separator": "x\u2028y", "very long": "a" * 100_000}


def odd_key_cases() -> list[Any]:
    def preset(key: str) -> Any:
        document = bundled_document("presets", "teach-roofline-basics.json")
        document["workload"][key] = 1
        return document

    def accelerator(key: str) -> Any:
        document = bundled_document("accelerators", "h100-sxm.toml")
        document["tdp_W"][key] = 1
        return document

    def model(key: str) -> Any:
        document = bundled_document("models", "qwen3-8b.toml")
        document["architecture"][key] = 1
        return document

    cases = [("preset", "p.json", preset), ("accelerator", "a.toml", accelerator), ("model", "m.toml", model)]
    return [pytest.param(*case, id=case[0]) for case in cases]


def load_any(name: str, catalog: Catalog) -> Callable[[Path], object]:
    return {
        "preset": lambda path: load_preset(path, catalog),
        "accelerator": load_accelerator_file,
        "model": load_model_file,
        "hf-config": load_hf_config,
    }[name]


@pytest.mark.parametrize("odd", list(ODD_TEXTS))
@pytest.mark.parametrize(("loader", "name", "make"), odd_key_cases())
def test_an_odd_unknown_key_is_named_on_one_short_line(loader, name, make, odd, tmp_path, catalog):
    """Unknown keys went into the message as they were: a key with a line break broke the
    CLI's one-line error, a 100,000-character key made a 100,000-character message."""
    path = write_document(tmp_path, name, make(ODD_TEXTS[odd]))
    refusal(load_any(loader, catalog), path, PresetError if loader == "preset" else CatalogError)


def odd_value_cases() -> list[Any]:
    def architecture_class(value: Any) -> Any:
        document = bundled_document("accelerators", "h100-sxm.toml")
        document["architecture_class"] = value
        return document

    def accelerator_id(value: Any) -> Any:
        document = bundled_document("accelerators", "h100-sxm.toml")
        document["id"] = f"Not-an-id {value}"
        return document

    def layer_attention(value: Any) -> Any:
        document = bundled_document("models", "qwen3-8b.toml")
        document["architecture"]["layer_attention"] = [value] * 36
        return document

    def total_params(value: Any) -> Any:
        document = bundled_document("models", "qwen3-8b.toml")
        document["nominal"]["total_params"] = value if not isinstance(value, str) else 10**4000
        return document

    def architectures(value: Any) -> Any:
        return {**hf_document("qwen3-8b"), "architectures": [value]}

    def model_type(value: Any) -> Any:
        document = hf_document("qwen3-8b")
        del document["architectures"]
        return {**document, "model_type": value}

    def layer_types(value: Any) -> Any:
        return {**hf_document("qwen3-8b"), "layer_types": [value] * 36}

    cases = [
        ("accelerator", "a.toml", architecture_class),
        ("accelerator", "a.toml", accelerator_id),
        ("model", "m.toml", layer_attention),
        ("model", "m.toml", total_params),
        ("hf-config", "m.json", architectures),
        ("hf-config", "m.json", model_type),
        ("hf-config", "m.json", layer_types),
    ]
    return [pytest.param(*case, id=case[2].__name__) for case in cases]


@pytest.mark.parametrize("odd", list(ODD_TEXTS))
@pytest.mark.parametrize(("loader", "name", "make"), odd_value_cases())
def test_an_odd_value_is_named_on_one_short_line(loader, name, make, odd, tmp_path, catalog):
    """Values from the file were quoted in full, or not at all (config.json architectures)."""
    path = write_document(tmp_path, name, make(ODD_TEXTS[odd]))
    refusal(load_any(loader, catalog), path)


@pytest.mark.parametrize("odd", list(ODD_TEXTS))
@pytest.mark.parametrize("field", ["metric", "workload", "accelerator", "kind"])
def test_an_odd_measurement_value_is_named_on_one_short_line(field, odd, tmp_path, catalog):
    """The measurement table quoted the file's values in full: a 100,000-character metric or
    accelerator id made a 100,000-character message."""
    document = tomllib.loads((TESTS / "fixtures" / "measurements" / "small.toml").read_text(encoding="utf-8"))
    document["measurement"][3][field] = ODD_TEXTS[odd]
    path = write_document(tmp_path, "measurements.toml", document)
    error = refusal(lambda path: load_measurements(path, catalog), path)
    assert error.field == f"measurement[3].{field}"
