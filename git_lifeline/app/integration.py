"""How MCP clients start the server: the `.mcp.json` entry and the other clients' snippets.

No MCP SDK here: `git lifeline init` uses this, and init must stay light. The
snippets are described in docs/INTEGRATION.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from ..git.fs import read_worktree_file, write_atomic

SERVER_NAME = "lifeline"
MCP_JSON = ".mcp.json"


def server_entry(repo: Optional[Path] = None) -> dict:
    """The stdio server entry. Without `repo` the client must start it in the repository
    (Claude Code and Cursor do, for a project file); with it, `git -C` points git there."""
    args = ["lifeline", "mcp"]
    if repo is not None:
        args = ["-C", str(repo)] + args
    return {"command": "git", "args": args}


MAX_MCP_JSON_BYTES = 1 << 20


def install_mcp_json(workdir: Path) -> tuple:
    """Add the `lifeline` server to `<workdir>/.mcp.json`, never replacing anything.

    Returns (status, detail): created | added | kept | invalid.
    """
    path = workdir / MCP_JSON
    entry = server_entry()
    if not path.exists() and not path.is_symlink():
        _write(path, {"mcpServers": {SERVER_NAME: entry}})
        return ("created", str(path))
    try:  # bounded, and never through a link out of the work tree
        doc = json.loads(read_worktree_file(workdir, path, MAX_MCP_JSON_BYTES).decode("utf-8"))
    except OSError as exc:
        return ("invalid", f"{path} is not readable ({exc.strerror or exc}); left it untouched")
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return ("invalid", f"{path} is not readable JSON ({exc}); left it untouched")
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or (servers is not None and not isinstance(servers, dict)):
        return ("invalid", f"{path} has no mcpServers object; left it untouched")
    servers = doc.setdefault("mcpServers", {})
    if SERVER_NAME in servers:
        current = servers[SERVER_NAME]
        if current == entry:
            return ("kept", f"{path} already starts `git lifeline mcp`")
        return ("kept", f"{path} already has a server named {SERVER_NAME!r} "
                        f"({json.dumps(current, ensure_ascii=False)}); left it as it is")
    servers[SERVER_NAME] = entry
    _write(path, doc)
    return ("added", str(path))


def _write(path: Path, doc: dict) -> None:
    write_shared_file(path, json.dumps(doc, ensure_ascii=False, indent=2) + "\n")


def write_shared_file(path: Path, text: str) -> None:
    """Write a file meant to be committed, atomically, with the permissions the umask gives
    a new file (the temporary file behind an atomic write is private to its owner)."""
    write_atomic(path, text)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def snippets(repo: Path) -> list:
    """(client, where its configuration goes, the server entry under "mcpServers") for the
    clients configured by hand. Project files keep the entry free of machine paths."""
    return [
        ("Claude Desktop", "claude_desktop_config.json (it starts servers outside the repository)",
         server_entry(repo)),
        ("Cursor", ".cursor/mcp.json in the repository", server_entry()),
        ("Gemini CLI", ".gemini/settings.json in the repository", server_entry()),
    ]
