"""A line's projection file (LIFELINE.md): where it is, and keeping it level with the ref.

The file is derived: a write to the line has succeeded before the file is touched, so a
file that cannot be written (a full or read-only work tree) is a warning in the sink,
never a failed write. Writers are serialised by a lock under the git dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Optional

from ..errors import InputError, LifelineError
from ..git.fs import read_text_exact, write_atomic
from ..git.repo import GitRepo
from ..git.store import DEFAULT_LINE, LineStore, file_lock

# The projection renderer is imported where a file is written: read paths (context,
# recall) never load it.

_DISABLED = ("", "false", "off", "no", "none", "0")
_ENABLED = ("true", "on", "yes", "1")


def projection_path(gr: GitRepo, line: str) -> Optional[Path]:
    """Where the line's projection lives, or None (disabled by git config, or a bare repository).

    `lifeline.projection` names the main line's file; other lines sit beside it with their
    name (LIFELINE.<line>.md) unless `lifeline.<line>.projection` says otherwise."""
    if gr.workdir is None:
        return None
    default = "LIFELINE.md" if line == DEFAULT_LINE else f"LIFELINE.{line}.md"
    configured = gr.config_get(f"lifeline.{line}.projection") if line != DEFAULT_LINE else None
    value = configured if configured is not None else gr.config_get("lifeline.projection")
    if value is not None and value.strip().lower() in _DISABLED:
        return None
    if value is not None and value.strip().lower() in _ENABLED:
        value = None  # a boolean "on": the default place, not a file named "true"
    if value and line != DEFAULT_LINE and configured is None:
        p = Path(value)
        value = str(p.with_name(f"{p.stem}.{line}{p.suffix or '.md'}"))
    return gr.workdir / (value or default)


def _order_key(e):
    return (e.ts, e.id)


class ProjectionFile:
    """One line's projection. `path` is None when there is none to keep (disabled, bare,
    or a confined face such as the MCP server, which never writes into the work tree)."""

    def __init__(self, store: LineStore, warnings: list, confined: bool = False):
        self.store = store
        self.gr = store.gr
        self.line = store.line
        self.warnings = warnings
        self.path = None if confined else projection_path(self.gr, self.line)

    def _lock(self):
        return file_lock(self.gr.git_dir / f"lifeline-{self.line}-projection.lock")

    def _entries(self, head: Optional[str]) -> list:
        return sorted(self.store.load(head).entries.values(), key=_order_key)

    def failed(self, exc: OSError) -> None:
        self.warnings.append(f"the entry is recorded, but {self.path} could not be refreshed "
                             f"({exc.strerror or exc}); run `git lifeline render` when that is fixed")

    def refresh(self, prev_head: Optional[str], added: list, head: Optional[str]) -> Optional[Path]:
        """Bring the file up to the ref after an append that moved it prev_head -> head.

        The ref is re-read under the lock: when another writer moved it since, the file is
        rendered for the ref as it is now, so a late refresh never puts an older view over
        a newer one."""
        if self.path is None:
            return None
        try:
            with self._lock():
                current_head = self.store.head()
                if current_head != head:
                    added, head = [], current_head
                self._level(prev_head, added, head)
        except OSError as exc:
            self.failed(exc)
            return None
        return self.path

    def _level(self, prev_head: Optional[str], added: list, head: Optional[str]) -> None:
        from ..views import projection
        assert self.path is not None
        try:
            current = read_text_exact(self.path)
        except (OSError, UnicodeDecodeError):
            current = None
        text = None
        target = self.store.entries_tree_id(head)
        if current is not None and added and target is not None:
            text = projection.append_rendered(current, self.store.entries_tree_id(prev_head), added, target)
        if text is None and current is not None:
            text = self._catch_up(current, head)
        if text is None:
            text = projection.render(self.line, self._entries(head), self.store.entries_tree_id(head))
        if text != current:
            write_atomic(self.path, text)

    def _catch_up(self, current: str, head: Optional[str]) -> Optional[str]:
        """Extend the file from the entries tree its footer names to the head's, reading
        only what the trees' difference adds (concurrent writers each refresh after their
        own append, so a refresh often finds the ref moved on; a full render there made
        each append cost a full read). None when only a full render will do."""
        from ..core.model import Entry
        from ..git.store import diff_entry_trees, is_entry_path
        from ..views import projection
        footer, shown = projection.shown_tree(current)
        target = self.store.entries_tree_id(head)
        if not footer:
            return None
        if shown == target:
            return current
        if target is None:
            return None
        repo: Any = self.store.repo  # the git layer's objects, passed back to it as they came
        try:
            old = repo[shown] if shown else None
            added = []
            for path, o, n, kind in diff_entry_trees(repo, old, repo[target]):
                if o is not None or n is None or kind != "blob" or not is_entry_path(path):
                    return None  # a removal or a replaced blob: render in full
                added.append(Entry.from_json(repo[n].data))  # a blob's bytes
        except (KeyError, ValueError, LifelineError):
            return None
        return projection.append_rendered(current, shown, added, target) if added else None

    def render(self) -> Path:
        """Rewrite the file from the ref (`git lifeline render`)."""
        if self.path is None:
            raise InputError("the projection is disabled (git config lifeline.projection) or this repo is bare")
        from ..views import projection
        with self._lock():
            head = self.store.head()
            write_atomic(self.path, projection.render(self.line, self._entries(head),
                                                      self.store.entries_tree_id(head)))
        return self.path

    def render_quietly(self) -> None:
        """`render` after a write that has succeeded: a failure is a warning, and a
        disabled projection is no failure at all."""
        if self.path is None:
            return
        try:
            self.render()
        except OSError as exc:
            self.failed(exc)

    def write_entries(self, entries: Iterable, head: str) -> None:
        """Write the file of a line that did not exist before: `entries` are all of it."""
        if self.path is None:
            return
        from ..views import projection
        try:
            write_atomic(self.path, projection.render(self.line, entries, self.store.entries_tree_id(head)))
        except OSError as exc:
            self.failed(exc)

    def after_pull(self, pl) -> None:
        """Level the file after a pull changed the line (a sync.PullLine)."""
        if self.path is None:
            return
        # Extending the file needs only the incoming entries; a missing file, a new line
        # or a replaced blob (ts tie-break changes an entry already shown) renders in full.
        if pl.before is None and len(pl.parsed) == len(pl.incoming):
            # a new line: everything was parsed while verifying it; render from that
            self.write_entries(pl.parsed.values(), pl.after)
            return
        extend = self.path.exists() and pl.before is not None and not pl.rewritten
        added = [pl.parsed.get(i) or self.store.get(i, pl.after) for i in pl.incoming] if extend else []
        self.refresh(pl.before, added, pl.after)
