"""The old one-object API, kept for the tests written against it: a thin facade over
the use cases of app/ (workspace, ledger, agents, exchange, interop, setup).

New code calls those modules; nothing in the program imports this one. Results keep
their old shapes here (dicts and tuples); the modules return typed results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..git.repo import GitRepo, open_repo
from ..git.store import DEFAULT_LINE
from . import exchange, interop, setup
from .agents import Agents, AgentWrite, ReviewOutcome, policy_in_effect
from .ledger import Ledger as LineLedger
from .ledger import LogOutcome, commit_message
from .workspace import Workspace

__all__ = ["Ledger", "LogOutcome", "AgentWrite", "ReviewOutcome", "commit_message"]


class Ledger(LineLedger):
    """A line with every operation of the old service object, each delegated."""

    def __init__(self, gr: GitRepo, line: str = DEFAULT_LINE):
        self.workspace = Workspace(gr)
        super().__init__(gr, line, self.workspace.warnings)

    @classmethod
    def open(cls, start: Optional[str] = None, line: Optional[str] = None) -> "Ledger":
        gr = open_repo(start)
        return cls(gr, line or gr.config_get("lifeline.defaultLine") or DEFAULT_LINE)

    make_entry = LineLedger.plan_entry

    def refresh_projection(self, prev_head: Optional[str], added: list, head: str) -> Optional[Path]:
        return self.projection.refresh(prev_head, added, head)

    # ---- across lines ----------------------------------------------------------
    def lines(self) -> list:
        return self.workspace.lines()

    def where(self, prefix: str) -> list:
        return self.workspace.where(prefix)

    def graph(self, only: Optional[str] = None, fmt: str = "mermaid") -> str:
        return self.workspace.graph(only, fmt)

    # ---- interop -----------------------------------------------------------------
    def import_from(self, source: Path, strict: bool = False, assume_utc: bool = False, progress=None) -> dict:
        return interop.import_from(self, source, strict, assume_utc, progress).to_json()

    def export_seed(self) -> str:
        return interop.export_seed(self)

    def migrate(self, source: Path, strict: bool = False) -> dict:
        r = interop.migrate(self, source, strict)
        return {"read": r.read, "added": r.added, "existing": r.existing, "mismatched": r.mismatched}

    def promote(self, src: str, refs: list, parents: Optional[list] = None) -> dict:
        r = interop.promote(self, src, refs, parents)
        return {"promoted": r.promoted, "already": r.already, "commit": r.commit}

    # ---- remotes ------------------------------------------------------------------
    def fetch(self, remote: Optional[str] = None, lines: Optional[list] = None) -> tuple:
        r = exchange.fetch(self.workspace, remote, lines)
        return r.remote, r.lines

    def pull(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None,
             fetch: bool = True) -> tuple:
        r = exchange.pull(self.workspace, remote, lines, progress, fetch)
        return r.remote, r.lines

    def push(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None):
        return exchange.push(self.workspace, remote, lines, progress)

    def sync(self, remote: Optional[str] = None, lines: Optional[list] = None, progress=None,
             attempts: int = 3) -> tuple:
        r = exchange.sync_with(self.workspace, remote, lines, progress, attempts)
        return r.remote, r.pulls, r.push

    def remote_setup(self, remote: Optional[str] = None) -> tuple:
        r = exchange.remote_setup(self.workspace, remote)
        return r.remote, r.added, r.refspec

    def unpushed(self, remote: Optional[str] = None) -> list:
        return exchange.unpushed(self.workspace, remote)

    @classmethod
    def clone(cls, url: str, directory: Optional[str] = None, progress=None) -> tuple:
        r = exchange.clone(url, directory, progress)
        return cls(r.workspace.gr, r.workspace.default_line), r.directory, r.remote, r.pulls

    # ---- agents and review -----------------------------------------------------------
    def _agents(self) -> Agents:
        return Agents(self)

    def policy(self):
        return policy_in_effect(self.gr)

    def review_trail(self):
        return self._agents().trail()

    def agent_write(self, kind: str, summary: str, body: str = "", parents: Optional[list] = None,
                    thread: Optional[str] = None, agent: str = "mcp-agent", provider: str = "none",
                    model: str = "unknown", via: str = "mcp") -> AgentWrite:
        return self._agents().write(kind, summary, body, parents, thread, agent, provider, model, via)

    def agent_checkpoint(self, thread: Optional[str], sections: dict, summary: Optional[str] = None,
                         agent: str = "mcp-agent", provider: str = "none", model: str = "unknown",
                         via: str = "mcp") -> AgentWrite:
        return self._agents().checkpoint(thread, sections, summary, agent, provider, model, via)

    def propose(self, fields: dict, thread: Optional[str] = None, via: str = "cli"):
        return self._agents().propose(fields, thread, via)

    def proposals(self, everything: bool = False) -> list:
        return self._agents().proposals(everything)

    def approve(self, refs: list) -> list:
        return self._agents().approve(refs)

    def reject(self, refs: list, why: str = "") -> list:
        return self._agents().reject(refs, why)

    def audit(self, since: Optional[str] = None) -> list:
        return [(row.record, row.proposal, row.counts) for row in self._agents().audit(since)]

    # ---- setup ------------------------------------------------------------------------
    def hooks_install(self, names: Optional[list] = None) -> list:
        return setup.install_hooks(self.workspace, names)

    def hooks_uninstall(self, names: Optional[list] = None) -> list:
        return setup.uninstall_hooks(self.workspace, names)

    def hooks_status(self) -> list:
        return setup.hook_status(self.workspace)

    def hooks_dir(self) -> Path:
        return setup.hooks_dir(self.workspace)

    def run_hook(self, name: str, args: list, stdin: bytes):
        return setup.run_hook(self.workspace, name, args, stdin, self.line)

    def install_mcp_config(self) -> tuple:
        r = setup.setup_mcp(self.workspace)
        return r.status, r.detail
