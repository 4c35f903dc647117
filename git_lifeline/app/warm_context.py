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
"""

from __future__ import annotations

from typing import Optional

from ..errors import LifelineError
from ..git import command, reffiles
from ..git.names import chosen_line, validate_name
from ..git.provenance import kept_for, trust_file
from ..git.stale_kept import KeptStaleness, code_view, kept_staleness, stale_file
from ..views import cache_warm
from ..views import context as ctx
from .context_run import assembled, checked_budget, delivered
from .staleness_kept import names_code

# The one repository extension that changes nothing read here (per-worktree config is
# listed by `git config` itself); any other sends `context` the normal way.
_KNOWN_EXTENSIONS = {"extensions.worktreeconfig"}


def warm_context(
    line: Optional[str], budget: Optional[int], budget_tokens: Optional[int], fmt: str, cwd: str, environ: dict
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
    provenance = kept_for(trust_file(lifeline_dir, name), head, trail_head)
    if provenance is None:
        return None  # who approved or imported what is found from git by the normal path, and kept
    cache_path = cache_warm.cache_file(lifeline_dir, name)
    fetched = reffiles.tracking_commits(where.common_dir, name)
    if fetched is None or not cache_warm.holds_fetched(cache_path, head, fetched):
        return None  # a `git fetch` brought what the line may lack: the normal path brings it in
    warm = cache_warm.warm_state(cache_path, head)
    if warm is None:
        return None
    try:
        st = warm.state
        if len(st.identities) > 1:
            return None  # two histories met: the normal path shows it first (ledger.with_history_notes)
        stale = KeptStaleness({}, None)
        if names_code(st):
            view = code_view(where.git_dir, where.common_dir)
            kept = None if view is None else kept_staleness(stale_file(lifeline_dir, name), head, trail_head, view)
            if kept is None:
                return None  # staleness reads git's history (git/history.py): the normal path finds it, and keeps it
            stale = kept
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
    except cache_warm.NotWarm:
        return None
    finally:
        warm.close()
    return delivered(parts, fmt) if parts.text else None


def _plain(config: dict) -> bool:
    """Whether the repository's settings are ones the files read here fully describe."""
    if any(key.startswith("extensions.") and key not in _KNOWN_EXTENSIONS for key in config):
        return False  # reftable, another object format, anything libgit2 may refuse
    if command.config_get(config, "core.repositoryformatversion", "0") not in ("0", "1"):
        return False
    if (command.config_get(config, "core.ignorecase") or "false").strip().lower() not in ("false", "no", "off", "0"):
        return False  # where case is ignored, `Main` finds main's ref file: the normal path refuses the clash
    bare = command.config_get(config, "core.bare")
    return (bare is None or bare.strip().lower() == "false") and command.config_get(config, "core.worktree") is None
