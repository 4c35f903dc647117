"""`context` from a warm cache, without opening the repository with pygit2: the same text
Ledger.context gives, or None, and then the caller takes the normal path.

Everything that is not "the cache is current for exactly the line's head" answers None:
a repository this cannot locate for sure (git/reffiles.py), settings it does not follow
(an `extensions.*` key, a bare repository, core.worktree, core.ignorecase), a line name or a budget the
normal path would refuse, a ref it cannot read for sure, a cache without a tip for that
head or that does not pass its checks (views/cache_warm.py), decisions in force that name
code paths without their staleness kept for exactly the line's head, its trail's head and
the code's HEAD (git/stale_kept.py: the normal path keeps it), a damaged row met while rendering, an empty
answer (the normal path says why on stderr). The repository's objects are not read: the
cache and its tip stand for them, as they do for the normal path's warm reads. A remote's
head of the line in the tracking refs (a plain `git fetch` brought it) that the line is not
known to contain answers None too: the normal path brings it in first (app/catch_up.py). So does
a line whose trust tiers (core/trust.py) were not kept for exactly its ledger and trail heads
(git/provenance.py): the normal path finds them from git and keeps them.

What it renders is kept (views/context_kept.py, `<line>.context`) for exactly the ask, the
head, the cache, the trail, the code view and the time window it was made for: the next
call with the same ask reads that small file and checks the rows it shows, instead of
reading the whole fold and planning the sections over every item in force.
"""

from __future__ import annotations

from typing import Optional

from ..core.dates import utc_now_key
from ..core.entry import abbrev
from ..errors import LifelineError
from ..git import command, reffiles
from ..git.names import chosen_line, validate_name
from ..git.stale_kept import KeptStaleness, code_view, kept_staleness, stale_file
from ..views import cache_warm
from ..views import context_kept as kept
from .context_run import checked_budget

# The one repository extension that changes nothing read here (per-worktree config is
# listed by `git config` itself); any other sends `context` the normal way.
_KNOWN_EXTENSIONS = {"extensions.worktreeconfig"}


def warm_context(
    line: Optional[str],
    budget: Optional[int],
    budget_tokens: Optional[int],
    fmt: str,
    cwd: str,
    environ: dict[str, str],
) -> Optional[str]:
    """The delivered context (`fmt`) of `line` (None: the default line), or None."""
    where = reffiles.locate(cwd, environ)
    if where is None:
        return None
    config = command.read_config_strictly(where.git_dir, where.workdir)
    if config is None or not _plain(config):
        return None
    try:
        if line is not None:
            validate_name(line)  # as --line is checked when it is given (cli/common.py), before any default
        name = chosen_line(line, command.config_get(config, "lifeline.defaultLine"))
        budget = checked_budget(budget, budget_tokens, lambda key, default: command.config_int(config, key, default))
    except LifelineError:
        return None
    head = reffiles.read_ref(where.common_dir, f"refs/lifeline/{name}")
    if head is None:
        return None
    lifeline_dir = reffiles.lifeline_dir_of(where.common_dir)
    trail_head = reffiles.read_ref(where.common_dir, f"refs/lifeline-review/{name}")
    cache_path = cache_warm.cache_file(lifeline_dir, name)
    fetched = reffiles.tracking_commits(where.common_dir, name)
    if fetched is None or not cache_warm.holds_fetched(cache_path, head, fetched):
        return None  # a `git fetch` brought what the line may lack: the normal path brings it in
    cache = cache_warm.opened(cache_path, head)
    if cache is None:
        return None
    try:
        tokenizer = command.config_get(config, "lifeline.tokenizer") if budget_tokens is not None else None
        ask = kept.Ask(budget, budget_tokens, tokenizer, fmt)
        base = kept.Base(name, head, trail_head, cache.tree, cache.seal)
        path = kept.kept_file(lifeline_dir, name)
        answer = kept.find(path, base, ask, utc_now_key())
        if answer is not None and _code_view_holds(answer.code, where, lifeline_dir, name, head, trail_head):
            return answer.text if cache.rows_sound(answer.shown) else None
        made = _rendered(cache, where, config, lifeline_dir, name, head, trail_head, budget, budget_tokens, fmt)
        if made is None:
            return None
        if made[1] is not None:
            kept.keep(path, base, ask, made[1])
        return made[0]
    except cache_warm.NotWarm:
        return None
    finally:
        cache.close()


def _rendered(
    cache: cache_warm.Opened,
    where: reffiles.Location,
    config: command.GitConfig,
    lifeline_dir: str,
    name: str,
    head: str,
    trail_head: Optional[str],
    budget: Optional[int],
    budget_tokens: Optional[int],
    fmt: str,
) -> Optional[tuple[str, Optional[kept.Kept]]]:
    """The context made from the cache's fold and what of it to keep (None for no answer
    at a validity window's very bound), or None (or NotWarm): the normal path's to answer."""
    from ..git.provenance import kept_for, trust_file
    from ..views import context as ctx
    from .context_run import assembled, delivered
    from .staleness_kept import names_code

    provenance = kept_for(trust_file(lifeline_dir, name), head, trail_head)
    if provenance is None:
        return None  # who approved or imported what is found from git by the normal path, and kept
    warm = cache.warm()
    st = warm.state
    if len(st.identities) > 1:
        return None  # two histories met: the normal path shows it first (ledger.with_history_notes)
    stale = KeptStaleness({}, None)
    view = None
    if names_code(st):
        view = code_view(where.git_dir, where.common_dir)
        found = None if view is None else kept_staleness(stale_file(lifeline_dir, name), head, trail_head, view)
        if found is None:
            return None  # staleness reads git's history (git/history.py): the normal path finds it, and keeps it
        stale = found
    inp = ctx.ContextInput(
        state=st,
        line=name,
        head_commit=head,
        conflicts=st.conflicting(),
        stale=stale.marks,
        stale_unknown=stale.unknown_note,
        provenance=provenance,
    )
    parts = assembled(inp, budget, budget_tokens, lambda key: command.config_get(config, key))
    if not parts.text:
        return None
    text = delivered(parts, fmt)
    window = kept.window_of(st)
    if window is None:
        return text, None
    return text, kept.Kept(text, sorted(i for i in warm.met if abbrev(i) in text), view, window)


def _code_view_holds(
    code: Optional[str], where: reffiles.Location, lifeline_dir: str, name: str, head: str, trail_head: Optional[str]
) -> bool:
    """Whether a kept answer made for code view `code` (None: no decision names code) holds:
    the worktree's HEAD and shallow file are as they were, and the line's staleness is kept
    for them (what the rendering read)."""
    if code is None:
        return True
    return code_view(where.git_dir, where.common_dir) == code and (
        kept_staleness(stale_file(lifeline_dir, name), head, trail_head, code) is not None
    )


def _plain(config: command.GitConfig) -> bool:
    """Whether the repository's settings are ones the files read here fully describe."""
    if any(key.startswith("extensions.") and key not in _KNOWN_EXTENSIONS for key in config):
        return False  # reftable, another object format, anything libgit2 may refuse
    if command.config_get(config, "core.repositoryformatversion", "0") not in ("0", "1"):
        return False
    if (command.config_get(config, "core.ignorecase") or "false").strip().lower() not in ("false", "no", "off", "0"):
        return False  # where case is ignored, `Main` finds main's ref file: the normal path refuses the clash
    bare = command.config_get(config, "core.bare")
    return (bare is None or bare.strip().lower() == "false") and command.config_get(config, "core.worktree") is None
