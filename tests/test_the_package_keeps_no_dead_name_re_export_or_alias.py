"""The house rule of issue 24, held by the tool that found the leftovers (tools/dead_code.py):
nothing in the package is dead (tests do not count as users: a facade kept for tests is a
leftover), no module passes on a name from elsewhere except what app/ hands the faces, and
no function only passes its parameters on to another (an override of a base's method and a
holder forwarding to its part are listed apart by the tool)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

from kit.run import ROOT


def dead_code_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dead_code", ROOT / "tools" / "dead_code.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("dead_code", module)  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_package_holds_no_dead_name_re_export_or_alias() -> None:
    tool = dead_code_tool()
    index = tool.load()
    assert [str(f) for f in tool.dead_names(index)] == []
    assert [str(f) for f in tool.reexports(index) if f.kind == "re-exported"] == []
    assert [str(f) for f in tool.aliases(index) if f.kind == "alias"] == []


def test_a_function_nothing_calls_and_one_that_only_passes_on_are_found(tmp_path: Path) -> None:
    tool = dead_code_tool()

    def sources_only(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if not n.endswith(".py") and not (Path(folder) / n).is_dir()]

    for folder in ("git_lifeline", "bench", "tools"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=sources_only)
    dates = tmp_path / "git_lifeline" / "core" / "dates.py"
    dates.write_text(
        dates.read_text()
        + "\n\ndef never_called_anywhere() -> int:\n    return 1\n"
        + "\n\ndef bound_of(text: str, end: bool) -> str:\n    return window_bound(text, end)\n"
    )
    index = tool.load(tmp_path)
    assert "never_called_anywhere" in {f.name for f in tool.dead_names(index)}
    assert "bound_of" in {f.name for f in tool.aliases(index) if f.kind == "alias"}
