"""Who may write what: the project's write policy for agents.

A policy maps (agent, kind) to a mode:

* ``direct``  — the entry goes straight into the line, and an audit record of the
  write goes into the review trail;
* ``propose`` — the entry waits in the review trail until a human approves it;
* ``deny``    — the write is refused.

Precedence: ``agents[agent][kind]`` > ``agents[agent]["*"]`` > ``kinds[kind]`` >
``default``. With no policy the built-in one applies: everything is proposed except
checkpoints, which are direct (working state, replaced by the next checkpoint).

Where it lives: ``.lifeline/policy.json`` as committed on a trusted ref that a checkout
cannot move (git/policy_ref.py chooses it; app/agents.py reads it), never the work tree
nor the checked-out branch. The policy is part of the project, reviewed and shared like
code. Human writes from the CLI never consult it (the human is the approver).

An invalid policy is an error that names the offending key; it never falls back to
anything, least of all to ``direct``.

This module parses; it reads nothing. app/agents.py reads the file on the trusted ref
through git/ and gives its text to `parse_policy`; with no file there it uses `Policy()`,
the built-in one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..errors import InputError
from .entry import KINDS
from .json_input import JSONInputError, JSONObject, read_json

MAX_POLICY_BYTES = 256 * 1024  # a policy is a few hundred bytes; never load a huge blob to parse it

MODES = ("direct", "propose", "deny")
POLICY_PATH = ".lifeline/policy.json"
ANY_KIND = "*"
FORMAT_VERSION = 1
OVERRIDE_KEY = "allow_secret_override"  # false: no entry's `allow-secret:` header is honoured
_TOP_KEYS = ("version", "default", "kinds", "agents", OVERRIDE_KEY)
BUILTIN_DEFAULT = "propose"
BUILTIN_KINDS: dict[str, str] = {"checkpoint": "direct"}  # kind -> mode


class PolicyError(InputError):
    """The policy file is unusable; the message names the file and the offending key."""


class PolicyDenied(InputError):
    """The policy refuses this agent this kind of write; nothing was written."""


@dataclass(frozen=True)
class Decision:
    mode: str  # direct | propose | deny
    rule: str  # the key that decided, e.g. "agents.claude-code.note", "kinds.checkpoint", "default"


@dataclass(frozen=True)
class Policy:
    default: str = BUILTIN_DEFAULT
    kinds: dict[str, str] = field(default_factory=lambda: dict(BUILTIN_KINDS))  # kind -> mode
    agents: dict[str, dict[str, str]] = field(default_factory=dict)  # agent -> {kind or "*": mode}
    source: str = "built-in default"  # where it was read from, for messages
    builtin: bool = True  # no policy file: the built-in default applies
    allow_secret_override: bool = True  # false: gates and verify refuse every override (overrides_refused)

    def decide(self, agent: str, kind: str) -> Decision:
        rules = self.agents.get(agent)
        if rules is not None:
            if kind in rules:
                return Decision(rules[kind], f"agents.{agent}.{kind}")
            if ANY_KIND in rules:
                return Decision(rules[ANY_KIND], f"agents.{agent}.{ANY_KIND}")
        if kind in self.kinds:
            return Decision(self.kinds[kind], f"kinds.{kind}")
        return Decision(self.default, "default")

    def to_dict(self) -> JSONObject:
        return {
            "version": FORMAT_VERSION,
            "default": self.default,
            "kinds": dict(self.kinds),
            "agents": {a: dict(r) for a, r in self.agents.items()},
            **({} if self.allow_secret_override else {OVERRIDE_KEY: False}),
        }


def _mode(value: object, where: str, source: str) -> str:
    if not isinstance(value, str) or value not in MODES:
        raise PolicyError(f"policy {source}: invalid mode {value!r} at {where}; use one of: {', '.join(MODES)}")
    return value


def _kind(name: object, where: str, source: str, allow_any: bool) -> str:
    if name == ANY_KIND and allow_any:
        return name
    if not isinstance(name, str) or name not in KINDS:
        extra = ' or "*"' if allow_any else ""
        raise PolicyError(f"policy {source}: unknown kind {name!r} at {where}; use one of: {', '.join(KINDS)}{extra}")
    return name


def parse_policy(text: str, source: str) -> Policy:
    """Parse and validate a policy document; every problem names the key it is at."""
    try:
        doc = read_json(text, MAX_POLICY_BYTES)
    except JSONInputError as exc:
        raise PolicyError(f"policy {source}: {exc}") from None
    if not isinstance(doc, dict):
        raise PolicyError(f"policy {source}: must be a JSON object with keys {', '.join(_TOP_KEYS)}")
    for key in doc:
        if key not in _TOP_KEYS:
            raise PolicyError(f"policy {source}: unknown key {key!r}; known keys: {', '.join(_TOP_KEYS)}")
    version = doc.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise PolicyError(
            f"policy {source}: unsupported version {version!r} at version; this git-lifeline "
            f"reads version {FORMAT_VERSION}"
        )
    default = _mode(doc.get("default", BUILTIN_DEFAULT), "default", source)
    kinds_doc = doc.get("kinds", BUILTIN_KINDS)
    if not isinstance(kinds_doc, dict):
        raise PolicyError(f"policy {source}: kinds must be an object of kind -> mode")
    kinds = {}
    for name, value in kinds_doc.items():
        kinds[_kind(name, f"kinds.{name}", source, allow_any=False)] = _mode(value, f"kinds.{name}", source)
    agents_doc = doc.get("agents", {})
    if not isinstance(agents_doc, dict):
        raise PolicyError(f"policy {source}: agents must be an object of agent name -> {{kind: mode}}")
    agents = {}
    for agent, rules in agents_doc.items():
        if not agent.strip() or agent != agent.strip() or any(ch in agent for ch in "\r\n"):
            raise PolicyError(f"policy {source}: invalid agent name {agent!r} at agents")
        if not isinstance(rules, dict):
            raise PolicyError(f'policy {source}: agents.{agent} must be an object of kind (or "*") -> mode')
        agents[agent] = {
            _kind(k, f"agents.{agent}.{k}", source, allow_any=True): _mode(v, f"agents.{agent}.{k}", source)
            for k, v in rules.items()
        }
    allow = doc.get(OVERRIDE_KEY, True)
    if not isinstance(allow, bool):
        raise PolicyError(f"policy {source}: {OVERRIDE_KEY} must be true or false, not {allow!r}")
    return Policy(
        default=default, kinds=kinds, agents=agents, source=source, builtin=False, allow_secret_override=allow
    )


def overrides_refused(text: str) -> bool:
    """Whether a policy document refuses every override of the secret scan: its
    `allow_secret_override` is anything but true. Read apart from the rest of the document, so
    that a mistake elsewhere in the file (which stops agents' writes) never lets overrides in
    that the team meant to refuse; a document that is no JSON object refuses nothing."""
    try:
        doc = read_json(text, MAX_POLICY_BYTES)
    except JSONInputError:
        return False
    return isinstance(doc, dict) and OVERRIDE_KEY in doc and doc[OVERRIDE_KEY] is not True


def render_policy(policy: Policy) -> str:
    return json.dumps(policy.to_dict(), ensure_ascii=False, indent=2) + "\n"


def starter_policy(agents: tuple[str, ...] = ()) -> Policy:
    """The file `git lifeline policy --init` writes: the built-in rules made explicit, plus,
    for each named agent, direct writes of working notes (checkpoint, note) and proposals
    for everything else."""
    return Policy(
        agents={a: {"checkpoint": "direct", "note": "direct", ANY_KIND: "propose"} for a in agents},
        source=POLICY_PATH,
        builtin=False,
    )
