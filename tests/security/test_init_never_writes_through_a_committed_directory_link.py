"""`init` never writes outside the work tree through a directory link a clone committed
(`.claude -> ~/.claude`, `.github`, `.cursor`): every file the tool keeps in the work tree
goes through the one writer, which refuses a link out of the tree at any path component."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit.home import hermetic  # noqa: F401  (fixtures)
from kit.repos import repo_with_a_commit  # noqa: F401  (fixtures)
from kit.run import Via, cli, git


def outside_dirs(tmp_path: Path) -> dict:
    made = {}
    for name in (".claude", ".github", ".cursor", ".mcp-home"):
        d = tmp_path / "users-home" / name.lstrip(".")
        d.mkdir(parents=True)
        made[name] = d
    return made


def files_under(d: Path) -> list:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@pytest.mark.parametrize("how", ["existing", "dangling"])
def test_init_never_rewrites_the_users_global_settings_through_a_committed_link(repo, tmp_path, how):  # noqa: F811
    outside = outside_dirs(tmp_path)
    if how == "existing":  # the user's real global settings, which the hooks would rewrite
        (outside[".claude"] / "settings.json").write_text('{"permissions": {"allow": ["Bash(*)"]}}\n')
    for name in (".claude", ".github", ".cursor"):
        target = outside[name] if how == "existing" else outside[name] / "not-yet"
        (repo / name).symlink_to(target)
    git(repo, "add", ".claude", ".github", ".cursor")
    git(repo, "commit", "-q", "-m", "agent settings")
    before = {name: files_under(d) for name, d in outside.items()}
    settings_before = (outside[".claude"] / "settings.json").read_text() if how == "existing" else None
    r = cli(repo, "init", "--no-mcp", "--no-hooks", "--agents", "claude,cursor,copilot", via=Via.THIS_PROCESS)
    assert {name: files_under(d) for name, d in outside.items()} == before, r
    if settings_before is not None:
        assert (outside[".claude"] / "settings.json").read_text() == settings_before
    assert "out of the work tree" in r.out + r.err, r
    assert (repo / "CLAUDE.md").is_file()  # the files inside the tree are still written


def test_init_never_writes_the_mcp_file_through_a_link_out_of_the_work_tree(repo, tmp_path):  # noqa: F811
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"mcpServers": {}}\n')
    (repo / ".mcp.json").symlink_to(elsewhere)
    cli(repo, "init", "--no-hooks", "--no-agents", via=Via.THIS_PROCESS)
    assert elsewhere.read_text() == '{"mcpServers": {}}\n'
