"""The small sentence model the semantic-recall tests run (tests/fetch_test_model.py puts it
in tests/.model/, or LIFELINE_TEST_MODEL names it). Without it those tests skip, except
under CI=true, where they fail: a missing model never turns the suite green."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kit.run import TESTS

MODEL_DIR = Path(os.environ.get("LIFELINE_TEST_MODEL") or TESTS / ".model" / "all-MiniLM-L6-v2")


def need_model() -> Path:
    """The model's folder, or a skip (a failure under CI=true)."""
    if (MODEL_DIR / "model.safetensors").is_file():
        return MODEL_DIR
    msg = f"model not found in {MODEL_DIR}; run tests/fetch_test_model.py (CI always has it)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    """(where imported) `need_model()`, once a module."""
    return need_model()
