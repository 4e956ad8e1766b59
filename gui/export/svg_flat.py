"""One coordinate system for an exported SVG: the figure's pixels.

Qt's SVG generator writes each plot's data in the plot's own coordinates under a scaling
``transform`` (e.g. ``matrix(175.9,0,0,-179.2,…)``), with ``vector-effect="non-scaling-stroke"``
to keep the lines thin. Renderers that ignore that attribute (librsvg, hence Inkscape and most
Linux viewers) then draw every line 175 times as thick: large blobs. Here every such group's
transform is applied to the coordinates of its shapes and dropped, so that lines, marks and
axes are all in the figure's pixels and render the same everywhere. Texts and images keep
their (translation or rotation) transform, which every renderer handles alike.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

SVG = "http://www.w3.org/2000/svg"
_MATRIX = re.compile(r"^\s*matrix\(([^)]*)\)\s*$")
_PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# Absolute path commands whose arguments are all x,y pairs (what Qt writes).
_PAIR_COMMANDS = set("MLCQST")
_SHAPES = {f"{{{SVG}}}{name}" for name in ("path", "polyline", "polygon", "rect")}

Matrix = tuple[float, float, float, float, float, float]
Rect = tuple[float, float, float, float]  # left, top, right, bottom


def flatten_svg(data: bytes, plot_areas: Iterable[tuple[Matrix, Rect]] = ()) -> bytes:
    """``data`` (an SVG Qt wrote) with the shapes' transforms applied to their coordinates, and
    the shapes drawn in a plot's data coordinates (``plot_areas``: each plot's data transform and
    its rectangle in figure pixels) cut at that rectangle, as the plot clips them on screen."""
    ET.register_namespace("", SVG)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(data)
    areas = list(plot_areas)
    for group in root.iter(f"{{{SVG}}}g"):
        matrix = _matrix(group.get("transform"))
        if matrix is None:
            continue
        if not len(group):
            del group.attrib["transform"]
            continue
        if not all(child.tag in _SHAPES for child in group):
            continue
        if not all(_bake(child, matrix) for child in list(group)):
            continue  # a shape this cannot rewrite: the group keeps its transform (all baked or none)
        del group.attrib["transform"]
        scale = math.sqrt(abs(matrix[0] * matrix[3] - matrix[1] * matrix[2]))
        cosmetic = all(child.get("vector-effect") == "non-scaling-stroke" for child in group)
        if not cosmetic and group.get("stroke-width") and abs(scale - 1) > 1e-9:
            group.set("stroke-width", _number(float(group.get("stroke-width")) * scale))
        area = next((rect for data_matrix, rect in areas if _same(matrix, data_matrix)), None)
        if area is not None:
            for child in list(group):
                filled = (child.get("fill") or group.get("fill") or "black") != "none"
                if not _clip(child, area, filled):
                    group.remove(child)
    return b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(root, encoding="utf-8")


def _same(a: Matrix, b: Matrix) -> bool:
    return all(abs(x - y) <= 1e-3 * max(1.0, abs(x), abs(y)) for x, y in zip(a, b, strict=True))


# ---- clipping at a plot's rectangle -------------------------------------------------------------

Point = tuple[float, float]


def _subpaths(shape: ET.Element) -> list[tuple[list[Point], bool]] | None:
    """The shape's straight-line subpaths (points, closed); None if it has curves."""
    tag = shape.tag.rpartition("}")[2]
    if tag in ("polyline", "polygon"):
        values = [float(token) for token in _PATH_TOKEN.findall(shape.get("points", ""))]
        points = [(values[i], values[i + 1]) for i in range(0, len(values) - 1, 2)]
        return [(points, tag == "polygon")]
    subpaths: list[tuple[list[Point], bool]] = []
    command, numbers = "", []

    def take() -> bool:
        if command in ("M", "L"):
            points = [(numbers[i], numbers[i + 1]) for i in range(0, len(numbers) - 1, 2)]
            if command == "M" or not subpaths:
                subpaths.append((points, False))
            else:
                subpaths[-1][0].extend(points)
            return True
        return command in ("", "Z")

    for token in _PATH_TOKEN.findall(shape.get("d", "")):
        if token.isalpha():
            if not take():
                return None
            command, numbers = token.upper(), []
            if command == "Z" and subpaths:
                subpaths[-1] = (subpaths[-1][0], True)
        else:
            numbers.append(float(token))
    return subpaths if take() else None


def _clip(shape: ET.Element, rect: Rect, filled: bool) -> bool:
    """Cut ``shape`` at ``rect``; False when nothing of it is left inside."""
    subpaths = _subpaths(shape)
    if subpaths is None:  # curves (a round mark): kept whole if it reaches into the plot
        values = [float(token) for token in _PATH_TOKEN.findall(shape.get("d", "")) if not token.isalpha()]
        xs, ys = values[0::2], values[1::2]
        return bool(xs) and min(xs) <= rect[2] and max(xs) >= rect[0] and min(ys) <= rect[3] and max(ys) >= rect[1]
    pieces: list[str] = []
    for points, closed in subpaths:
        if filled:
            polygon = _clip_polygon(points, rect)
            if len(polygon) >= 3:
                pieces.append("M" + " L".join(f"{_number(x)},{_number(y)}" for x, y in polygon) + " Z")
        else:
            ring = [*points, points[0]] if closed and points else points
            pieces.extend("M" + " L".join(f"{_number(x)},{_number(y)}" for x, y in run)
                          for run in _clip_polyline(ring, rect))
    if not pieces:
        return False
    shape.tag = f"{{{SVG}}}path"
    shape.attrib.pop("points", None)
    shape.set("d", " ".join(pieces))
    return True


def _clip_polyline(points: list[Point], rect: Rect) -> list[list[Point]]:
    """The parts of a polyline inside ``rect`` (Liang-Barsky on each segment)."""
    runs: list[list[Point]] = []
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        segment = _clip_segment(x0, y0, x1, y1, rect)
        if segment is None:
            continue
        start, end = segment
        if runs and runs[-1][-1] == start:
            runs[-1].append(end)
        else:
            runs.append([start, end])
    return runs


def _clip_segment(x0: float, y0: float, x1: float, y1: float, rect: Rect) -> tuple[Point, Point] | None:
    left, top, right, bottom = rect
    dx, dy = x1 - x0, y1 - y0
    low, high = 0.0, 1.0
    for p, q in ((-dx, x0 - left), (dx, right - x0), (-dy, y0 - top), (dy, bottom - y0)):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            low = max(low, t)
        else:
            high = min(high, t)
        if low > high:
            return None
    start = (x0, y0) if low == 0 else (x0 + low * dx, y0 + low * dy)
    end = (x1, y1) if high == 1 else (x0 + high * dx, y0 + high * dy)
    return start, end


def _clip_polygon(points: list[Point], rect: Rect) -> list[Point]:
    """A filled polygon cut at ``rect`` (Sutherland-Hodgman)."""
    left, top, right, bottom = rect
    edges = (
        (lambda p: p[0] >= left, lambda p, q: _at_x(p, q, left)),
        (lambda p: p[0] <= right, lambda p, q: _at_x(p, q, right)),
        (lambda p: p[1] >= top, lambda p, q: _at_y(p, q, top)),
        (lambda p: p[1] <= bottom, lambda p, q: _at_y(p, q, bottom)),
    )
    for inside, cross in edges:
        if not points:
            break
        result: list[Point] = []
        for current, previous in zip(points, [points[-1], *points[:-1]]):
            if inside(current):
                if not inside(previous):
                    result.append(cross(previous, current))
                result.append(current)
            elif inside(previous):
                result.append(cross(previous, current))
        points = result
    return points


def _at_x(p: Point, q: Point, x: float) -> Point:
    t = (x - p[0]) / (q[0] - p[0])
    return x, p[1] + t * (q[1] - p[1])


def _at_y(p: Point, q: Point, y: float) -> Point:
    t = (y - p[1]) / (q[1] - p[1])
    return p[0] + t * (q[0] - p[0]), y


def _matrix(text: str | None) -> Matrix | None:
    match = _MATRIX.match(text or "")
    if match is None:
        return None
    values = [float(value) for value in re.split(r"[\s,]+", match.group(1).strip())]
    return tuple(values) if len(values) == 6 else None  # type: ignore[return-value]


def _apply(matrix: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = matrix
    return a * x + c * y + e, b * x + d * y + f


def _number(value: float) -> str:
    return f"{value:.6g}"


def _pair(matrix: Matrix, x: float, y: float) -> str:
    u, v = _apply(matrix, x, y)
    return f"{_number(u)},{_number(v)}"


def _bake(shape: ET.Element, matrix: Matrix) -> bool:
    """Rewrite ``shape``'s coordinates through ``matrix``; False (and nothing changed) when it
    has a form this does not know."""
    tag = shape.tag.rpartition("}")[2]
    if tag == "rect":
        try:
            x, y = float(shape.get("x", 0)), float(shape.get("y", 0))
            w, h = float(shape.get("width", 0)), float(shape.get("height", 0))
        except ValueError:
            return False
        if shape.get("rx") or shape.get("ry"):
            return False
        corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
        d = "M" + " L".join(_pair(matrix, *corner) for corner in corners) + " Z"
        for name in ("x", "y", "width", "height"):
            shape.attrib.pop(name, None)
        shape.tag = f"{{{SVG}}}path"
        shape.set("d", d)
        return True
    if tag in ("polyline", "polygon"):
        numbers = _PATH_TOKEN.findall(shape.get("points", ""))
        if len(numbers) % 2 or any(token.isalpha() for token in numbers):
            return False
        values = [float(token) for token in numbers]
        shape.set("points", " ".join(_pair(matrix, values[i], values[i + 1]) for i in range(0, len(values), 2)))
        return True
    d = _path(shape.get("d", ""), matrix)
    if d is None:
        return False
    shape.set("d", d)
    return True


def _path(d: str, matrix: Matrix) -> str | None:
    out: list[str] = []
    numbers: list[float] = []
    command = ""

    def flush() -> bool:
        if command in "Zz":
            return not numbers
        if command not in _PAIR_COMMANDS or len(numbers) % 2:
            return False
        out.append(command + " ".join(_pair(matrix, numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2)))
        return True

    for token in _PATH_TOKEN.findall(d):
        if token.isalpha():
            if command and not flush():
                return None
            if token in "Zz":
                out.append("Z")
            command, numbers = token, []
        else:
            if not command:
                return None
            numbers.append(float(token))
    if command and not flush():
        return None
    return " ".join(out)
