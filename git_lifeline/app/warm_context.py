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

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from ..core.dates import utc_now_key
from ..errors import LifelineError
from ..git import command, reffiles
from ..git.names import chosen_line, validate_name
from ..git.stale_kept import KeptStaleness, code_view, kept_staleness, stale_file
from ..views import cache_warm
from ..views import context_kept as kept
from ..views.delivery import deliver
from .context_run import assembled, checked_budget, context_input
from .staleness_kept import names_code

if TYPE_CHECKING:  # annotations only: a kept answer is served without the truth's or the context's modules
    from ..core.truth import State
    from ..git.repo import GitRepo
    from ..views.context import ContextParts
    from ..views.context_sections import ContextInput

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
    cache = _opened(where.common_dir, name, head)
    if cache is None:
        return None
    try:
        ask = _ask(budget, budget_tokens, lambda key: command.config_get(config, key))
        base = _base(where.common_dir, name, head, cache)
        answer = _served(cache, where.git_dir, where.common_dir, base, ask)
        if answer is not None:
            return deliver(answer.stable, answer.volatile, fmt)
        rendered = _rendered(cache, where, config, lifeline_dir, base, budget, budget_tokens)
        if rendered is None:
            return None
        st, parts, view = rendered
        _keep(cache, kept.kept_file(lifeline_dir, name), base, ask, st, parts, view)
        return deliver(parts.stable, parts.volatile, fmt)
    except cache_warm.NotWarm:
        return None
    finally:
        cache.close()


def kept_parts(
    gr: GitRepo, line: str, head: Optional[str], budget: Optional[int], budget_tokens: Optional[int]
) -> Optional[ContextParts]:
    """What the normal path (Ledger.context) answers for the whole line at `head` when an
    answer is kept for exactly it (the checks the warm path makes, from the same files), or
    None: every MCP call and hook answers through the normal path, and each read the whole
    fold for an answer that had not changed."""
    if head is None:
        return None
    common_dir = str(gr.common_dir)
    if reffiles.read_ref(common_dir, f"refs/lifeline/{line}") != head:
        return None  # the files say otherwise than git (a namespace, a reftable): not ours to answer
    cache = _opened(common_dir, line, head)
    if cache is None:
        return None
    try:
        base = _base(common_dir, line, head, cache)
        answer = _served(cache, str(gr.git_dir), common_dir, base, _ask(budget, budget_tokens, gr.config_get))
        if answer is None:
            return None  # (a damaged row the answer shows: the normal path meets it, warns and drops the cache)
        from ..views.context import ContextParts

        return ContextParts(answer.stable, answer.volatile)
    finally:
        cache.close()


def _opened(common_dir: str, line: str, head: str) -> Optional[cache_warm.Opened]:
    """The line's cache opened for exactly `head` (views/cache_warm.py), unless a `git fetch`
    brought what the line may lack (the normal path brings it in first: app/catch_up.py)."""
    cache_path = cache_warm.cache_file(reffiles.lifeline_dir_of(common_dir), line)
    fetched = reffiles.tracking_commits(common_dir, line)
    if fetched is None or not cache_warm.holds_fetched(cache_path, head, fetched):
        return None
    return cache_warm.opened(cache_path, head)


def _base(common_dir: str, line: str, head: str, cache: cache_warm.Opened) -> kept.Base:
    """What an answer for `line` at `head` is made of, besides the ask: the trail's head
    (who approved what) and the cache as checked for the tip."""
    trail_head = reffiles.read_ref(common_dir, f"refs/lifeline-review/{line}")
    return kept.Base(line, head, trail_head, cache.tree, cache.seal)


def _served(
    cache: cache_warm.Opened, git_dir: str, common_dir: str, base: kept.Base, ask: kept.Ask
) -> Optional[kept.Kept]:
    """The answer kept for exactly this base, ask, time and code view, its shown rows sound."""
    path = kept.kept_file(reffiles.lifeline_dir_of(common_dir), base.line)
    answer = kept.find(path, base, ask, utc_now_key())
    if answer is None or not _code_view_holds(answer.code, git_dir, common_dir, base):
        return None
    return answer if cache.rows_sound(answer.shown) else None


def keep_answer(
    gr: GitRepo,
    inp: ContextInput,
    parts: ContextParts,
    budget: Optional[int],
    budget_tokens: Optional[int],
) -> None:
    """Keep what the normal path (Ledger.context) answered for the whole line at its head,
    so that the next warm `context` reads it instead of rendering it again: after a `log`,
    the `context` that brings the cache up to the new head is the only one that pays for
    it. Kept only when the warm path would have answered the same (no notice first, one
    bootstrap in force, the cache and its tip current for exactly this head, staleness kept
    for this code view); anything else keeps nothing."""
    head = inp.head_commit
    if head is None or inp.notice or not parts.text or len(inp.state.identities) > 1:
        return
    git_dir, common_dir = str(gr.git_dir), str(gr.common_dir)
    if reffiles.read_ref(common_dir, f"refs/lifeline/{inp.line}") != head:
        return  # moved meanwhile: the next `context` renders for the new head
    lifeline_dir = reffiles.lifeline_dir_of(common_dir)
    cache = cache_warm.opened(cache_warm.cache_file(lifeline_dir, inp.line), head)
    if cache is None:
        return
    try:
        base = _base(common_dir, inp.line, head, cache)
        view = None
        if names_code(inp.state):
            view = code_view(git_dir, common_dir)
            if view is None or not _code_view_holds(view, git_dir, common_dir, base):
                return
        ask = _ask(budget, budget_tokens, gr.config_get)
        _keep(cache, kept.kept_file(lifeline_dir, inp.line), base, ask, inp.state, parts, view)
    finally:
        cache.close()


def _ask(budget: Optional[int], budget_tokens: Optional[int], config_get: Callable[[str], Optional[str]]) -> kept.Ask:
    """What is asked, as the rendering reads it (context_run.assembled: the tokenizer only
    counts for a budget in tokens)."""
    tokenizer = (config_get("lifeline.tokenizer") or "estimate") if budget_tokens is not None else None
    return kept.Ask(budget, budget_tokens, tokenizer)


def _keep(
    cache: cache_warm.Opened,
    path: Path,
    base: kept.Base,
    ask: kept.Ask,
    st: State,
    parts: ContextParts,
    view: Optional[str],
) -> None:
    """Keep the answer (not at a validity window's very bound, nor with rows the file
    cannot name)."""
    window = kept.window_of(st)
    shown = cache.ids_shown(parts.text)
    if window is not None and shown is not None:
        kept.keep(path, base, ask, kept.Kept(parts.stable, parts.volatile, shown, view, window))


def _rendered(
    cache: cache_warm.Opened,
    where: reffiles.Location,
    config: command.GitConfig,
    lifeline_dir: str,
    base: kept.Base,
    budget: Optional[int],
    budget_tokens: Optional[int],
) -> Optional[tuple[State, ContextParts, Optional[str]]]:
    """(the truth, the context made from the cache's fold, the code view its staleness is
    for), or None (or NotWarm): the normal path's to answer."""
    from ..git.provenance import kept_for, trust_file

    name, head, trail_head = base.line, base.ledger, base.trail
    provenance = kept_for(trust_file(lifeline_dir, name), head, trail_head)
    if provenance is None:
        return None  # who approved or imported what is found from git by the normal path, and kept
    st = cache.warm().state
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
    inp = context_input(st, name, head, stale, provenance)
    parts = assembled(inp, budget, budget_tokens, lambda key: command.config_get(config, key))
    return (st, parts, view) if parts.text else None


def _code_view_holds(code: Optional[str], git_dir: str, common_dir: str, base: kept.Base) -> bool:
    """Whether an answer made for code view `code` (None: no decision names code) holds:
    the worktree's HEAD and shallow file are as they were, and the line's staleness is kept
    for them (what the rendering read)."""
    if code is None:
        return True
    return code_view(git_dir, common_dir) == code and (
        kept_staleness(stale_file(reffiles.lifeline_dir_of(common_dir), base.line), base.ledger, base.trail, code)
        is not None
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
