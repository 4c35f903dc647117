"""A line's projection file (LIFELINE.md): where it is, and keeping it level with the ref.

The file is derived: a write to the line has succeeded before the file is touched, so a
file that cannot be written (a full or read-only work tree) is a warning in the sink,
never a failed write. Writers are serialised by a lock under the git dir.

It is generated and ignored (docs/FORMAT.md §6): created, it is listed in the git dir's
info/exclude; a tracked one is never rewritten unless asked (`render`); a link out of
the work tree, a device or a FIFO in its place is never read or written; it keeps the
newest entries that fit in lifeline.projectionMaxBytes. A pull keeps the files of the
lines worked on here (the default line, a configured one, one whose file exists) and
creates none for the others.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from ..core.entry import entry_order_key
from ..errors import InputError, LifelineError
from ..git.fs import (
    UnsafeFile,
    ensure_excluded,
    file_lock,
    is_tracked,
    read_bounded,
    worktree_target,
    write_atomic,
    write_in_worktree,
)
from ..git.names import DEFAULT_LINE
from ..git.repo import GitRepo
from ..git.store import LineStore

if TYPE_CHECKING:  # annotations only: the app is imported where a command runs
    from typing import ContextManager

    from ..core.entry import Entry
    from ..git.integrate import PullLine
    from ..views.cache_warm import Opened
    from ..views.projection import Newest

# The projection renderer is imported where a file is written: read paths (context,
# recall) never load it.

_DISABLED = ("", "false", "off", "no", "none", "0")
_ENABLED = ("true", "on", "yes", "1")
# A file past this is not read back to be extended (it is rendered afresh instead).
_READ_LIMIT = 64 << 20
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_GAIN_READ = 4096  # entries added past the cache, read (and held as bytes) at once


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


def max_bytes(gr: GitRepo) -> tuple[int, Optional[str]]:
    """(lifeline.projectionMaxBytes, why it was not usable or None); 0 means no bound.
    Takes git's k/m/g suffixes."""
    from ..views.projection import DEFAULT_MAX_BYTES

    raw = gr.config_get("lifeline.projectionMaxBytes")
    if raw is None:
        return DEFAULT_MAX_BYTES, None
    text = raw.strip().lower()
    unit = text[-1:] if text[-1:] in _UNITS and text[-1:] else ""
    try:
        value = int(text[: len(text) - len(unit)]) * _UNITS[unit]
    except ValueError:
        value = -1
    if value < 0:
        return DEFAULT_MAX_BYTES, (
            f"git config lifeline.projectionMaxBytes {raw!r} is not a size "
            f"(bytes, with k, m or g; 0 for no limit): using {DEFAULT_MAX_BYTES}"
        )
    return value, None


class ProjectionFile:
    """One line's projection. `path` is None when there is none to keep (disabled, bare,
    or a confined face such as the MCP server, which never writes into the work tree)."""

    def __init__(self, store: LineStore, warnings: list[str], confined: bool = False):
        self.store = store
        self.gr = store.gr
        self.line = store.line
        self.warnings = warnings
        self.path = None if confined else projection_path(self.gr, self.line)
        self._said: set[str] = set()

    def _lock(self) -> ContextManager[None]:
        return file_lock(self.gr.git_dir / f"lifeline-{self.line}-projection.lock")

    def _rendered(self, head: Optional[str], limit: int) -> str:
        """The line's file at `head` rendered afresh, holding only the entries it shows: chosen
        by the cache's order when it can say (reading what the file shows), else from every
        entry of the line streamed past."""
        from ..views import projection

        newest = projection.Newest(limit)
        if not self._chosen_by_the_cache(head, newest):
            newest = projection.Newest(limit)
            for e in self.store.stream(head):
                newest.add(e)
        return newest.text(self.line, self.store.tree_id(head))

    def _chosen_by_the_cache(self, head: Optional[str], newest: Newest) -> bool:
        """Give `newest` the line's entries at `head` as far as the file shows them, in the
        order and count of the cache's rows (views/cache_warm.Opened) when the cache reflects
        the head's entries tree or one the head's only adds to. Every entry shown, and every
        one added since the cache, is read from git and checked as `load` checks it; a row
        whose entry does not say what the row says sends the caller to the stream. False
        (the caller streams the line) whenever the cache cannot say."""
        from ..views import cache_warm

        tree = self.store.tree_id(head)
        if newest.max_bytes <= 0 or tree is None:
            return False  # a whole file shows every entry: nothing to choose
        opened = cache_warm.opened_as_sealed(cache_warm.cache_file(str(self.gr.lifeline_dir()), self.line))
        if opened is None:
            return False
        try:
            sound = opened.sound_count()
            if sound is None:
                return False
            if opened.tree != tree:
                gain = self.store.gain(None if opened.tree == "none" else opened.tree, tree)
                if not gain.only_added_blobs:
                    return False
                ids = [g.entry_id for g in gain.entries]
                for start in range(0, len(ids), _GAIN_READ):  # an import's gain: its blobs a part at a time
                    for _, added in self.store.entries_at(ids[start : start + _GAIN_READ], head):
                        if added is not None:
                            newest.add(added)
            return self._rows_taken(opened, sound, head, newest)
        except (KeyError, LifelineError):
            return False
        finally:
            opened.close()

    def _rows_taken(self, opened: Opened, sound: int, head: Optional[str], newest: Newest) -> bool:
        """The cache's sound rows, newest first, given to `newest` until it shows no older
        one; the rest only counted. A page (one scan of the rows; its blobs read whole) is
        about twice what a file of the bound shows (an entry of a realistic line renders to
        ~560 bytes); a file of shorter entries takes more pages."""
        from ..core.entry import format_ts

        page, taken, before = max(64, newest.max_bytes // 256), 0, None
        while True:
            rows = opened.newest_sound(before, page)
            if rows is None:
                return False
            row_ts = {entry_id: ts for ts, entry_id in rows}
            for entry_id, e in self.store.entries_at([i for _, i in rows], head):
                if e is None or format_ts(e.ts) != row_ts[entry_id]:
                    return False  # the row is not what the line holds
                if not newest.shows(entry_order_key(e)):
                    newest.also_count(sound - taken)
                    return True
                newest.add(e)
                taken += 1
            if len(rows) < page:
                return taken == sound
            before = rows[-1]

    def _warn(self, text: str) -> None:
        if text not in self._said:  # once per command, however many writes it makes
            self._said.add(text)
            self.warnings.append(text)

    def failed(self, exc: OSError) -> None:
        self._warn(
            f"the entry is recorded, but {self.path} could not be refreshed "
            f"({exc.strerror or exc}); run `git lifeline render` when that is fixed"
        )

    def _bound(self) -> int:
        limit, why = max_bytes(self.gr)
        if why:
            self._warn(why)
        return limit

    # ---- where it may be written -------------------------------------------------------
    def _target(self, asked: bool = False) -> Optional[Path]:
        """The file to write: the path, or the file a link inside the work tree names.
        None (with a warning) when it is not ours to write: a link out of the work tree,
        not a regular file, or tracked by git and not asked for. Raises UnsafeFile for an
        explicit render of an unsafe place (a tracked file is written when asked)."""
        assert self.path is not None and self.gr.workdir is not None
        try:
            target = worktree_target(self.gr.workdir, self.path)
        except UnsafeFile as exc:
            if asked:
                raise
            self._warn(
                f"{exc.strerror}: the projection was not written there (nothing is read or written "
                "through it); remove it, or point git config lifeline.projection elsewhere"
            )
            return None
        if not asked and (is_tracked(self.gr, self.path) or (target != self.path and is_tracked(self.gr, target))):
            self._warn(
                f"{self.path.name} is tracked by git, so it is not rewritten on every write (a generated "
                "file in history conflicts on merges and fills it with noise commits); "
                f"`git lifeline render` writes it when you ask, or stop tracking it: "
                f"git rm --cached {self.path.name}"
            )
            return None
        return target

    # ---- what the tool itself last wrote -----------------------------------------------
    # A file is extended only when it is byte for byte the one this tool last wrote there:
    # one committed by someone else (then untracked, as the warning advises) or edited by
    # hand can carry a footer naming the current tree above invented entries, and
    # extending it would keep them for good. Anything else is rendered in full.
    def _written_record(self) -> Path:
        return self.gr.git_dir / f"lifeline-{self.line}-projection.sha256"

    @staticmethod
    def _digest(target: Path, data: bytes) -> str:
        return f"{hashlib.sha256(data).hexdigest()} {target}\n"

    def _read(self, target: Path) -> Optional[str]:
        try:
            data = read_bounded(target, _READ_LIMIT, follow=False)
            ours = self._written_record().read_text(encoding="utf-8") == self._digest(target, data)
            return data.decode("utf-8") if ours else None
        except (OSError, UnicodeDecodeError):
            return None

    def _write(self, target: Path, text: str) -> None:
        created = not target.exists()
        data = text.encode("utf-8")
        assert self.gr.workdir is not None
        write_in_worktree(self.gr.workdir, target, text)
        try:
            write_atomic(self._written_record(), self._digest(target, data))
        except OSError:
            pass  # the next write renders the file in full instead of extending it
        if created:
            self._exclude()

    def _exclude(self) -> None:
        assert self.path is not None
        try:
            ensure_excluded(self.gr, self.path)
        except OSError as exc:
            self._warn(
                f"{self.path.name} is written but could not be listed in the git dir's info/exclude "
                f"({exc.strerror or exc}); git status will show it until it is ignored"
            )

    def settle(self) -> str:
        """What `init` decides and says about the file: ignored through info/exclude
        (whether it exists yet or not), left alone when git tracks it, or disabled."""
        if self.path is None:
            return "disabled (git config lifeline.projection)" if self.gr.workdir is not None else "none (bare)"
        if is_tracked(self.gr, self.path):
            return (
                f"{self.path} is tracked by git: it is not rewritten on writes (`git lifeline render` "
                f"writes it when asked; to let it be generated: git rm --cached {self.path.name})"
            )
        self._exclude()
        return f"{self.path} (generated from the ref, ignored by git through info/exclude; never committed)"

    def kept_after_pull(self) -> bool:
        """Whether a pull levels this line's file: the default line's, a line given its
        own `lifeline.<line>.projection`, or a file already here (a line written or
        rendered in this clone). A remote's other lines get none: a remote with 2,000
        lines must not put 2,000 files into every teammate's work tree."""
        if self.path is None:
            return False
        default = self.gr.config_get("lifeline.defaultLine") or DEFAULT_LINE
        if self.line in (DEFAULT_LINE, default):
            return True
        if self.gr.config_get(f"lifeline.{self.line}.projection") is not None:
            return True
        return self.path.is_file() and not self.path.is_symlink() and not is_tracked(self.gr, self.path)

    # ---- keeping it level --------------------------------------------------------------
    def refresh(self, prev_head: Optional[str], added: list[Entry], head: Optional[str]) -> Optional[Path]:
        """Bring the file up to the ref after an append that moved it prev_head -> head.

        The ref is re-read under the lock: when another writer moved it since, the file is
        rendered for the ref as it is now, so a late refresh never puts an older view over
        a newer one."""

        def level(target: Path) -> None:
            current = self.store.head()
            self._level(target, prev_head, added if current == head else [], current)

        return self.path if self._write_quietly(level) else None

    def _write_quietly(self, work: Callable[[Path], None]) -> bool:
        """Run work(target) under the projection lock when the file is ours to write: a
        write to the line has already succeeded, so a file that cannot be written is a
        warning, never a failure. True when the work ran."""
        if self.path is None:
            return False
        try:
            with self._lock():
                target = self._target()
                if target is None:
                    return False
                work(target)
        except OSError as exc:
            self.failed(exc)
            return False
        return True

    def _level(self, target: Path, prev_head: Optional[str], added: list[Entry], head: Optional[str]) -> None:
        from ..views import projection

        current = self._read(target)
        limit = self._bound()
        text = None
        tree = self.store.tree_id(head)
        if current is not None and added and tree is not None:
            text = projection.append_rendered(current, self.store.tree_id(prev_head), added, tree)
        if text is None and current is not None:
            text = self._catch_up(current, head)
        if text is None:
            text = self._rendered(head, limit)
        else:
            text = projection.bound(text, self.line, limit)
        if text != current:
            self._write(target, text)

    def _catch_up(self, current: str, head: Optional[str]) -> Optional[str]:
        """Extend the file from the entries tree its footer names to the head's, reading
        only what the trees' difference adds (concurrent writers each refresh after their
        own append, so a refresh often finds the ref moved on; a full render there made
        each append cost a full read). None when only a full render will do."""
        from ..core.entry import Entry
        from ..views import projection

        footer, shown = projection.shown_tree(current)
        target = self.store.tree_id(head)
        if not footer:
            return None
        if shown == target:
            return current
        if target is None:
            return None
        try:
            gain = self.store.gain(shown or None, target)
            if not gain.only_added_blobs:
                return None  # a removal or a replaced blob: render in full
            added = [Entry.from_json(self.store.blob_bytes(g.oid)) for g in gain.entries]
        except (KeyError, ValueError, LifelineError):
            return None
        return projection.append_rendered(current, shown, added, target) if added else None

    def render(self) -> Path:
        """Rewrite the file from the ref (`git lifeline render`): written even when git
        tracks it (asked for), never through a link out of the work tree."""
        if self.path is None:
            raise InputError("the projection is disabled (git config lifeline.projection) or this repo is bare")

        with self._lock():
            try:
                target = self._target(asked=True)
            except UnsafeFile as exc:
                raise InputError(
                    f"{exc.strerror}; nothing was written (remove it, or point git config "
                    "lifeline.projection elsewhere)"
                ) from None
            assert target is not None
            head = self.store.head()
            self._write(target, self._rendered(head, self._bound()))
        return self.path

    def render_quietly(self) -> None:
        """Level the file after a write that has succeeded (migrate): a failure is a
        warning, and a disabled projection is no failure at all."""
        self._write_quietly(lambda target: self._level(target, None, [], self.store.head()))

    def write_entries(self, entries: Iterable[Entry], head: Optional[str]) -> None:
        """Write the file of a line that did not exist before: `entries` are all of it."""
        from ..views import projection

        self._write_quietly(
            lambda target: self._write(
                target, projection.render_bounded(self.line, entries, self.store.tree_id(head), self._bound())
            )
        )

    def after_pull(self, pl: PullLine) -> None:
        """Level the file after a pull changed the line (a sync.PullLine), when the line
        is one worked on here (kept_after_pull)."""
        if not self.kept_after_pull():
            return
        # Extending the file needs only the incoming entries; a missing file, a new line
        # or a replaced blob (ts tie-break changes an entry already shown) renders in full.
        if pl.before is None and len(pl.parsed) == len(pl.incoming):
            # a new line: everything was parsed while verifying it; render from that
            self.write_entries(pl.parsed.values(), pl.after)
            return
        assert self.path is not None
        extend = self.path.exists() and pl.before is not None and not pl.rewritten
        added: list[Entry] = []
        for i in pl.incoming if extend else ():
            entry = pl.parsed.get(i) or self.store.read(i, pl.after)
            assert entry is not None, f"entry {i} was verified on its way in, and is in {pl.after}"
            added.append(entry)
        self.refresh(pl.before, added, pl.after)
