"""Catalogs: every file the engine reads (accelerators, models, Hugging Face configs,
constants, presets, ...) turned into core values, under one hostile-input policy."""

from .catalog import DATA_DIR_VARIABLE, Catalog, load_model_path, user_data_dir

__all__ = ["DATA_DIR_VARIABLE", "Catalog", "load_model_path", "user_data_dir"]
