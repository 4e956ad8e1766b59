"""The numba face of the physics: ``helpers`` (each the twin of a reference function) and
``evaluate.evaluate_many``, the one loop over scenarios the engine calls."""

from .evaluate import evaluate_many

__all__ = ["evaluate_many"]
