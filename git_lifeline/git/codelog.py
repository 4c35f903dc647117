"""What the code did to a set of paths: `git log` over git's own pathspec matching.

`code_changes` runs one `git log` for one set of pathspecs (passed after `--`, never
parsed here) over the commits of the code's HEAD outside some commits' history, and
follows a path renamed out of the pathspecs under its new name. `CodeLog` answers many
such questions at once, in parallel, and remembers the answers for the HEAD they were
read at (`$GIT_COMMON_DIR/lifeline/code-changes.json`, a rebuildable cache that checks
itself): reading the context again at the same HEAD starts no git process for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ..core.anchors import LineAnchor, map_lines, parse_anchor, parse_hunks
from ..core.json_input import read_json
from .code_together import PATHSPEC_ENV, Question, untouched_together
from .fs import write_atomic
from .repo import GitRepo, at_time

RENAME_ROUNDS = 3  # times a rename out of the pathspecs is followed
RENAMED_LIMIT = 256  # new names added by following renames
WORKERS = 4  # git processes at once
CACHE_FILE = "code-changes.json"
# each commit's id, time and the values of its `Lifeline:` trailers (a trailer re-affirms)
LOG_FORMAT = "--format=%x00%H %ct %(trailers:key=Lifeline,valueonly,unfold,separator=%x20)"
CACHE_VERSION = 3  # 3: the anchors resolved at HEAD are remembered too
CACHE_MAX_BYTES = 16 << 20
CACHE_MAX_COMMITS = 5000  # a longer answer is not remembered
# commits one question reads at most (newest first): staleness says "N+ commits" past it, so
# a `paths: *` decision dated 2001 costs this many commits, not the whole history
WALK_LIMIT = 1000
_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_HEADER = re.compile(rb"([0-9a-f]{40,64}) (\d+)((?: [^ \n]*)*)")
_LINK = re.compile(r"[0-9a-f]{6,64}")
_NUMSTAT = re.compile(rb"(\d+|-)\t(\d+|-)\t(.*)", re.S)


@dataclass
class Change:
    status: str
    old: str
    new: str
    lines: int = 0


@dataclass(frozen=True)
class LoggedCommit:
    """One commit of a `git log` over a decision's pathspecs."""

    commit: str
    when: int  # committer time
    changes: tuple[Change, ...]  # what it did under the pathspecs
    links: tuple[str, ...]  # its `Lifeline:` trailer values that look like entry ids, lowercase


def parse_log(raw: bytes) -> list[LoggedCommit]:
    """[(commit, commit time, [Change], `Lifeline:` trailer values)] from `git log -z --raw
    --numstat` with LOG_FORMAT (values that are no entry id prefix are left out)."""
    tokens = raw.split(b"\0")
    commits: list = []
    numstat: dict = {}
    current: Optional[list] = None

    def close() -> None:
        if current is not None:
            for ch in current[2]:
                ch.lines = numstat.get(ch.new, 0)

    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i].lstrip(b"\n")
        if not tok:
            i += 1
            continue
        if tok.startswith(b":") and current is not None:
            status = tok.rsplit(b" ", 1)[-1][:1].decode("ascii", "replace")
            if status in ("R", "C") and i + 2 < n:
                old, new = tokens[i + 1], tokens[i + 2]
                i += 3
            else:
                old = new = tokens[i + 1] if i + 1 < n else b""
                i += 2
            current[2].append(
                Change(status, old.decode("utf-8", "surrogateescape"), new.decode("utf-8", "surrogateescape"))
            )
            continue
        m = _NUMSTAT.fullmatch(tok)
        if m and current is not None:
            if m.group(3) == b"" and i + 2 < n:
                path = tokens[i + 2]
                i += 3
            else:
                path = m.group(3)
                i += 1
            added = int(m.group(1)) if m.group(1).isdigit() else 0
            deleted = int(m.group(2)) if m.group(2).isdigit() else 0
            numstat[path.decode("utf-8", "surrogateescape")] = added + deleted
            continue
        h = _HEADER.fullmatch(tok)
        if h:
            close()
            numstat = {}
            values = h.group(3).decode("utf-8", "replace").lower().split()
            current = [h.group(1).decode("ascii"), int(h.group(2)), [], tuple(v for v in values if _LINK.fullmatch(v))]
            commits.append(current)
        i += 1
    close()
    return [LoggedCommit(c[0], c[1], tuple(c[2]), c[3]) for c in commits]


def _log(
    gr: GitRepo, head: str, hide: Iterable[str], since: Optional[int], specs: list[str]
) -> Optional[list[LoggedCommit]]:
    args = ["log", "-z", "--raw", "--numstat", "-M", "--full-history", f"--max-count={WALK_LIMIT}", LOG_FORMAT]
    if since is not None:
        args.append(at_time("--since", since))
    # only full object ids (checked) reach git as revisions; pathspecs only after `--`
    args += ["--end-of-options", head, *(f"^{h}" for h in hide), "--", *specs]
    proc = gr.git(args, check=False, env=dict(os.environ, **PATHSPEC_ENV))
    if proc.returncode != 0:
        return None  # a pathspec git refuses (outside the repository, unknown magic)
    return parse_log(proc.stdout)


def _renamed_away(gr: GitRepo, commit: str, gone: set[str]) -> list[str]:
    """New names of the paths in `gone` that `commit` renamed (to outside the pathspecs)."""
    proc = gr.git(["diff-tree", "-z", "-r", "-M", "--raw", "--no-commit-id", "--end-of-options", commit], check=False)
    if proc.returncode != 0:
        return []
    out = []
    tokens = proc.stdout.split(b"\0")
    i = 0
    while i < len(tokens):
        tok = tokens[i].lstrip(b"\n")
        if tok.startswith(b":") and tok.rsplit(b" ", 1)[-1][:1] == b"R" and i + 2 < len(tokens):
            old = tokens[i + 1].decode("utf-8", "surrogateescape")
            if old in gone:
                out.append(tokens[i + 2].decode("utf-8", "surrogateescape"))
            i += 3
        elif tok.startswith(b":"):
            i += 2
        else:
            i += 1
    return out


def code_changes(
    gr: GitRepo, head: str, hide: Iterable[str], since: Optional[int], specs: Iterable[str]
) -> list[LoggedCommit]:
    """Commits on `head`, not in the history of `hide`, made after `since` (when given),
    that touched the pathspecs (or the lines of an anchor, `resolve_anchor`), following
    renames; [LoggedCommit], newest first."""
    hide, specs = list(hide), list(specs)
    anchored = [s for s in specs if s.startswith("-")]  # a pathspec never starts with `-`
    if not anchored:
        return _path_changes(gr, head, hide, since, specs)
    logs = (
        [_path_changes(gr, head, hide, since, [s for s in specs if not s.startswith("-")])]
        if len(anchored) < len(specs)
        else []
    )
    logs += [_anchor_changes(gr, head, hide, since, s) for s in anchored]
    by_commit: dict[str, LoggedCommit] = {}
    for log in logs:
        for row in log:
            seen = by_commit.get(row.commit)
            by_commit[row.commit] = (
                row if seen is None else LoggedCommit(seen.commit, seen.when, seen.changes + row.changes, seen.links)
            )
    return sorted(by_commit.values(), key=lambda r: -r.when)[:WALK_LIMIT]


def _path_changes(
    gr: GitRepo, head: str, hide: list[str], since: Optional[int], specs: list[str]
) -> list[LoggedCommit]:
    renames: dict[str, list[str]] = {}  # commit -> new names of what it deleted, diffed once
    added = 0
    for round_ in range(RENAME_ROUNDS + 1):
        log = _log(gr, head, hide, since, specs)
        if not log or round_ == RENAME_ROUNDS or added >= RENAMED_LIMIT:
            return log or []
        followed: set[str] = set()
        for row in log:
            gone = {c.old for c in row.changes if c.status == "D"}
            if gone:
                if row.commit not in renames:
                    renames[row.commit] = _renamed_away(gr, row.commit, gone)
                followed.update(f":(top,literal){new}" for new in renames[row.commit])
        followed -= set(specs)
        if not followed:
            return log
        new_specs = sorted(followed)[: RENAMED_LIMIT - added]
        added += len(new_specs)
        specs += new_specs
    return []


@dataclass(frozen=True)
class CodeSize:
    """What a set of pathspecs holds at one commit: files, and their lines (text files)."""

    files: int
    lines: int


def code_size(gr: GitRepo, commit: str, specs: list[str]) -> CodeSize:
    """The files and lines `specs` match in `commit`'s tree, as git matches them: the diff
    from the empty tree, so every pathspec magic means what it means to `git log`; an
    anchor's lines (`resolve_anchor`) count as one file."""
    anchored = [_anchor_size(gr, commit, s) for s in specs if s.startswith("-")]
    specs = [s for s in specs if not s.startswith("-")]
    plain = _path_size(gr, commit, specs) if specs else CodeSize(0, 0)
    return CodeSize(plain.files + sum(a.files for a in anchored), plain.lines + sum(a.lines for a in anchored))


def _path_size(gr: GitRepo, commit: str, specs: list[str]) -> CodeSize:
    empty = gr.git(["hash-object", "-t", "tree", "--stdin"], input=b"", check=False).stdout.decode().strip()
    argv = ["diff-tree", "-r", "-z", "--numstat", "--no-renames", "--end-of-options", empty, commit, "--", *specs]
    proc = gr.git(argv, check=False, env=dict(os.environ, **PATHSPEC_ENV))
    if proc.returncode != 0:
        return CodeSize(0, 0)
    files = lines = 0
    for tok in proc.stdout.split(b"\0"):
        m = _NUMSTAT.fullmatch(tok.lstrip(b"\n"))
        if m:
            files += 1
            lines += int(m.group(1)) if m.group(1).isdigit() else 0
    return CodeSize(files, lines)


# ---- anchors: lines of one file, or a symbol (core/anchors.py) ------------------------
# What an anchor of a `paths:` header becomes for one code HEAD (never a pathspec: those
# never start with `-`): `-L<start>,<end>:<file>` (its lines as they are at HEAD) or
# `-L:<regex>:<file>` (a symbol, found by git at HEAD), both handed to `git log -L`; or
# `-D<file>` when the file or every line of the range is gone (the file's log counts).
_L_HUNK = re.compile(rb"@@ -\d+(?:,\d+)? \+\d+(?:,(\d+))? @@")


def _symbol_regex(symbol: str) -> str:
    # the name as a whole word (`login`, not `login_helper`), in the basic regular
    # expressions git compiles an `-L :<funcname>:` with; a symbol holds no `:` or metacharacter
    return rf"\(^\|[^A-Za-z0-9_]\){symbol}\($\|[^A-Za-z0-9_]\)"


def _exists(gr: GitRepo, commit: str, path: str) -> bool:
    return gr.git(["cat-file", "-e", f"{commit}:{path}"], check=False).returncode == 0


def _renamed_to(gr: GitRepo, base: str, head: str, path: str) -> Optional[str]:
    """The name `path` of `base` has in `head` when a rename took it there (git's -M)."""
    argv = ["diff", "-z", "--name-status", "-M", "--diff-filter=R", "--no-ext-diff", "--end-of-options", base, head]
    proc = gr.git(argv, check=False, env=dict(os.environ, **PATHSPEC_ENV))
    tokens = proc.stdout.split(b"\0") if proc.returncode == 0 else []
    for i in range(0, len(tokens) - 2, 3):
        if tokens[i].startswith(b"R") and tokens[i + 1].decode("utf-8", "surrogateescape") == path:
            return tokens[i + 2].decode("utf-8", "surrogateescape")
    return None


def resolve_anchor(gr: GitRepo, head: str, base: Optional[str], item: str) -> str:
    """What `item` of a `paths:` header asks of git at `head`: the item itself when it is a
    pathspec; for an anchor, its file followed from `base` (the code the decision was made
    against) to `head` across a rename, and a line range mapped through the diff between
    them (`git diff -U0`), so the range names the same code at HEAD as `git log -L` would
    follow it. Without `base` (or when the file was not in it) the lines are HEAD's."""
    anchor = parse_anchor(item)
    if anchor is None:
        return item
    path = anchor.path
    if base is not None and base != head and _exists(gr, base, path) and not _exists(gr, head, path):
        new = _renamed_to(gr, base, head, path)
        if new is None:
            return f"-D{path}"
        path = new
    elif not _exists(gr, head, path):
        return f"-D{path}"
    if not isinstance(anchor, LineAnchor):
        return f"-L:{_symbol_regex(anchor.symbol)}:{path}"
    start, end = anchor.start, anchor.end
    if base is not None and base != head and _exists(gr, base, anchor.path):
        argv = ["diff", "-U0", "-M", "--no-color", "--no-ext-diff", "--no-textconv", "--end-of-options"]
        argv += [base, head, "--", f":(top,literal){anchor.path}", f":(top,literal){path}"]
        proc = gr.git(argv, check=False, env=dict(os.environ, **PATHSPEC_ENV))
        if proc.returncode == 0:
            mapped = map_lines(parse_hunks(proc.stdout.decode("utf-8", "replace")), start, end)
            if mapped is None:
                return f"-D{path}"
            start, end = mapped
    return f"-L{start},{end}:{path}"


def _line_log_argv(spec: str) -> list[str]:
    return ["log", spec, "--no-color", "--no-ext-diff", "--no-textconv"]


def _anchor_changes(gr: GitRepo, head: str, hide: list[str], since: Optional[int], spec: str) -> list[LoggedCommit]:
    """The commits that touched an anchor's lines (`git log -L`, which follows them back
    across renames), with the lines each added or deleted there; for a `-D` anchor (or a
    symbol git no longer finds), the commits that touched its file."""
    if spec.startswith("-D"):
        return _path_changes(gr, head, hide, since, [f":(top,literal){spec[2:]}"])
    args = [*_line_log_argv(spec), f"--max-count={WALK_LIMIT}", LOG_FORMAT]
    if since is not None:
        args.append(at_time("--since", since))
    args += ["--end-of-options", head, *(f"^{h}" for h in hide)]
    proc = gr.git(args, check=False)
    if proc.returncode != 0:  # the symbol is gone, or the file has fewer lines now
        # `-L:<regex>:<file>` (a symbol's regex holds no `:`) or `-L<start>,<end>:<file>`
        path = spec[3:].split(":", 1)[1] if spec.startswith("-L:") else spec.split(":", 1)[1]
        return _path_changes(gr, head, hide, since, [f":(top,literal){path}"])
    return parse_line_log(proc.stdout)


def parse_line_log(raw: bytes) -> list[LoggedCommit]:
    """[LoggedCommit] from `git log -L` with LOG_FORMAT: each commit's patch of the range
    is one Change per file, its lines the lines added and deleted there."""
    out = []
    for chunk in raw.split(b"\0")[1:]:
        head_line, _, patch = chunk.partition(b"\n")
        h = _HEADER.fullmatch(head_line)
        if h is None:
            continue
        values = h.group(3).decode("utf-8", "replace").lower().split()
        changes: list[Change] = []
        old = new = ""
        in_hunk = False
        for line in patch.split(b"\n"):
            if line.startswith(b"diff --git "):
                in_hunk, old, new = False, "", ""
            elif not in_hunk and line.startswith(b"--- "):
                old = _patch_path(line[4:])
            elif not in_hunk and line.startswith(b"+++ "):
                new = _patch_path(line[4:])
                status = "A" if not old else "D" if not new else "M"
                changes.append(Change(status, old or new, new or old))
            elif line.startswith(b"@@"):
                in_hunk = True
            elif in_hunk and changes and line[:1] in (b"+", b"-"):
                changes[-1].lines += 1
        links = tuple(v for v in values if _LINK.fullmatch(v))
        out.append(LoggedCommit(h.group(1).decode("ascii"), int(h.group(2)), tuple(changes), links))
    return out


def _patch_path(raw: bytes) -> str:
    """A path of a patch's `---`/`+++` line, without its `a/`/`b/`; "" for /dev/null.
    A path git quoted (C-style, for a `"`, a backslash or a control character) is unquoted."""
    if raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2:
        raw = _C_ESCAPE.sub(lambda m: _unescape(m.group(1)), raw[1:-1])
    text = raw.decode("utf-8", "surrogateescape")
    if text == "/dev/null":
        return ""
    return text[2:] if text[:2] in ("a/", "b/") else text


_C_ESCAPE = re.compile(rb"\\([0-7]{3}|.)", re.S)
_C_NAMED = {b"n": b"\n", b"t": b"\t", b"a": b"\a", b"b": b"\b", b"f": b"\f", b"r": b"\r", b"v": b"\v"}


def _unescape(code: bytes) -> bytes:
    if len(code) == 3:
        return bytes([int(code, 8) & 0xFF])
    return _C_NAMED.get(code, code)


def _anchor_size(gr: GitRepo, commit: str, spec: str) -> CodeSize:
    """The lines an anchor names at `commit`: the length of the range at the newest commit
    that touched it (`git log -L -n1`), which is its length now; nothing for a `-D` anchor
    or a symbol git no longer finds."""
    if spec.startswith("-D"):
        return CodeSize(0, 0)
    proc = gr.git([*_line_log_argv(spec), "--max-count=1", "--format=", "--end-of-options", commit], check=False)
    m = _L_HUNK.search(proc.stdout) if proc.returncode == 0 else None
    if m is None:
        return CodeSize(0, 0)
    lines = int(m.group(1)) if m.group(1) is not None else 1
    return CodeSize(1 if lines else 0, lines)


def _key(specs: Iterable[str], hide: Iterable[str], since: Optional[int]) -> str:
    return json.dumps([list(specs), sorted(hide), since], ensure_ascii=True)


def _to_json(log: list[LoggedCommit]) -> list[list[Any]]:
    return [[c.commit, c.when, [[ch.status, ch.old, ch.new, ch.lines] for ch in c.changes], list(c.links)] for c in log]


def _from_json(rows: object) -> Optional[list[LoggedCommit]]:
    """The log a cache row holds, or None when the row is not one we wrote."""
    if not isinstance(rows, list):
        return None
    out = []
    for row in rows:
        if not (
            isinstance(row, list)
            and len(row) == 4
            and isinstance(row[0], str)
            and _FULL_OID.fullmatch(row[0])
            and isinstance(row[1], int)
            and isinstance(row[2], list)
            and isinstance(row[3], list)
            and all(isinstance(v, str) and _LINK.fullmatch(v) for v in row[3])
        ):
            return None
        changes = []
        for ch in row[2]:
            if not (
                isinstance(ch, list)
                and len(ch) == 4
                and all(isinstance(x, str) for x in ch[:3])
                and isinstance(ch[3], int)
            ):
                return None
            changes.append(Change(ch[0], ch[1], ch[2], ch[3]))
        out.append(LoggedCommit(row[0], row[1], tuple(changes), tuple(row[3])))
    return out


def _digest(head: str, entries: dict, sizes: dict, anchors: dict) -> str:
    doc = [head, entries, sizes, anchors]
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


class CodeLog:
    """`code_changes` for many questions about one code HEAD, remembered for that HEAD."""

    def __init__(self, gr: GitRepo, head: str):
        self.gr, self.head = gr, head
        self.path = gr.lifeline_dir() / CACHE_FILE
        self.known: dict[str, list[LoggedCommit]] = {}  # _key of a question -> its log
        self.sizes: dict[str, CodeSize] = {}  # json of the pathspecs -> what they hold at HEAD
        self.anchors: dict[str, str] = {}  # json of [item, base] -> resolve_anchor's answer at HEAD
        # the answers remembered for the HEAD before this one, extended by the commits
        # since when that HEAD is in this one's history (a new commit, a fast-forward)
        self.previous: Optional[tuple[str, dict]] = None
        self._load()

    def _load(self) -> None:
        try:
            if self.path.stat().st_size > CACHE_MAX_BYTES:
                return
            doc = read_json(self.path.read_bytes(), CACHE_MAX_BYTES)
        except (OSError, ValueError):
            return
        # a cache for another HEAD, torn, or edited by hand is simply not used
        if not (
            isinstance(doc, dict)
            and doc.get("version") == CACHE_VERSION
            and isinstance(doc.get("head"), str)
            and _FULL_OID.fullmatch(doc["head"])
            and isinstance(doc.get("entries"), dict)
            and isinstance(doc.get("sizes"), dict)
            and isinstance(doc.get("anchors"), dict)
            and doc.get("digest") == _digest(doc["head"], doc["entries"], doc["sizes"], doc["anchors"])
        ):
            return
        if doc["head"] != self.head:
            self.previous = (doc["head"], doc["entries"])
            return
        for key, size in doc["sizes"].items():
            if isinstance(size, list) and len(size) == 2 and all(isinstance(n, int) and n >= 0 for n in size):
                self.sizes[key] = CodeSize(size[0], size[1])
        for key, spec in doc["anchors"].items():
            # only what resolve_anchor writes: an `-L`/`-D` spec (a pathspec is never remembered)
            if isinstance(spec, str) and spec[:2] in ("-L", "-D"):
                self.anchors[key] = spec
        for key, rows in doc["entries"].items():
            log = _from_json(rows)
            if log is not None:
                self.known[key] = log

    def _save(self) -> None:
        entries = {k: _to_json(v) for k, v in self.known.items() if len(v) <= CACHE_MAX_COMMITS}
        sizes = {k: [v.files, v.lines] for k, v in self.sizes.items()}
        doc = {
            "version": CACHE_VERSION,
            "head": self.head,
            "entries": entries,
            "sizes": sizes,
            "anchors": self.anchors,
            "digest": _digest(self.head, entries, sizes, self.anchors),
        }
        try:
            write_atomic(self.path, json.dumps(doc, ensure_ascii=True))
        except OSError:
            pass  # a read-only repository: the answers are still right, only not remembered

    def changes(self, questions: list[Question]) -> dict[Question, list[LoggedCommit]]:
        """{(specs, hide, since): log} for each question `(specs tuple, hide tuple, since)`."""
        wanted = {q: _key(*q) for q in questions}
        missing = [q for q, k in wanted.items() if k not in self.known]
        if missing:
            before = self._previous_answers()
            whole = [q for q in missing if self.previous is None or wanted[q] not in before]
            for q in untouched_together(self.gr, self.head, whole):
                self.known[wanted[q]] = []  # what its own walk answers: no commit touched it
            missing = [q for q in missing if wanted[q] not in self.known]

            def one(q: Question) -> list[LoggedCommit]:
                old = before.get(wanted[q])
                if old is not None and self.previous is not None:
                    # only what HEAD gained since the previous HEAD is read
                    new = code_changes(self.gr, self.head, (*q[1], self.previous[0]), q[2], list(q[0]))
                    if not any(ch.status == "D" for row in new for ch in row.changes):
                        return (new + old)[:WALK_LIMIT]
                    # a deletion may be a rename to follow: read it all again
                return code_changes(self.gr, self.head, q[1], q[2], list(q[0]))

            if missing:
                from concurrent.futures import ThreadPoolExecutor  # none when all were answered together

                with ThreadPoolExecutor(max_workers=min(WORKERS, len(missing))) as pool:
                    for q, log in zip(missing, pool.map(one, missing), strict=True):
                        self.known[wanted[q]] = log
            self._save()
        return {q: self.known[k] for q, k in wanted.items()}

    def _previous_answers(self) -> dict[str, list[LoggedCommit]]:
        """{question key: log} remembered for the previous HEAD, when it is in this HEAD's
        history (then the answer now is what HEAD gained since, then that); else empty."""
        if self.previous is None:
            return {}
        old_head, entries = self.previous
        proc = self.gr.git(["merge-base", "--is-ancestor", "--end-of-options", old_head, self.head], check=False)
        if proc.returncode != 0:
            self.previous = None
            return {}
        out = {}
        for key, rows in entries.items():
            log = _from_json(rows)
            if log is not None:
                out[key] = log
        return out

    def resolve(self, asks: list[tuple[str, Optional[str]]]) -> dict[tuple[str, Optional[str]], str]:
        """{(anchor item, base): resolve_anchor at this HEAD}, remembered with the logs."""
        keys = {a: json.dumps(list(a), ensure_ascii=True) for a in asks}
        missing = [a for a, k in keys.items() if k not in self.anchors]
        for item, base in missing:
            self.anchors[keys[(item, base)]] = resolve_anchor(self.gr, self.head, base, item)
        if missing:
            self._save()
        return {a: self.anchors[k] for a, k in keys.items()}

    def sizes_of(self, questions: list[tuple[str, ...]]) -> dict[tuple[str, ...], CodeSize]:
        """{specs tuple: CodeSize} at this HEAD (code_size), remembered with the logs."""
        keys = {q: json.dumps(list(q), ensure_ascii=True) for q in questions}
        missing = [q for q, k in keys.items() if k not in self.sizes]
        for q in missing:
            self.sizes[keys[q]] = code_size(self.gr, self.head, list(q))
        if missing:
            self._save()
        return {q: self.sizes[k] for q, k in keys.items()}


def unmatched_pathspecs(gr: GitRepo, specs: list[str]) -> list[str]:
    """The pathspecs of `specs` that match no file of the work tree (tracked, or untracked and
    not ignored), read as `code_changes` reads them: a `paths:` that matches nothing can never
    make its decision stale. Empty without a work tree (nothing to compare with)."""
    if gr.workdir is None:
        return []
    env = dict(os.environ, **PATHSPEC_ENV)
    unmatched = []
    for spec in specs:
        argv = ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", spec]
        proc = gr.git(argv, check=False, env=env)
        if proc.returncode == 0 and not proc.stdout:
            unmatched.append(spec)
    return unmatched
