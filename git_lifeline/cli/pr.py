"""`git lifeline pr`: the ledger's view of a range of code commits, for a pull request."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional

import click

from ..app.visible import visible
from .common import echo_json, line_option, open_ledger

if TYPE_CHECKING:  # annotations only: the app is imported where the command runs
    from ..app.pr import PrReport, TouchedDecision

SHOWN = 10  # items of one list a PR comment shows before "and N more"
ANNOTATIONS = 10  # GitHub shows at most 10 warnings and 10 notices of one step


def _md(text: str, width: int = 120) -> str:
    from ..app.text import md, one_line

    text = one_line(visible(text))
    return md(text if len(text) <= width else text[: width - 1] + "…")


def _more(shown: int, total: int) -> list[str]:
    return [f"- … and {total - shown} more (`git lifeline pr --format json`)"] if total > shown else []


def _files(t: TouchedDecision, n: int = 3) -> str:
    names = ", ".join(f"`{_md(f, 80)}`" for f in t.files[:n])
    return names + (f" and {len(t.files) - n} more" if len(t.files) > n else "")


STATE_WORDS = {"linked": "✅ linked", "reaffirmed": "✅ re-affirmed", "unlinked": "⚠️ unlinked"}


def markdown(r: PrReport) -> str:
    """A PR comment a reviewer reads in ten seconds: counts first, the strongest first, capped."""
    n = len(r.touched)
    head = f"### Lifeline: {n} decision{'s' if n != 1 else ''} govern{'s' if n == 1 else ''} this change"
    if not n:
        head = "### Lifeline: no decision in force governs the code this change touches"
    out = [head, ""]
    counts = []
    if r.unlinked:
        counts.append(f"**{len(r.unlinked)} unlinked**")
    if r.stale:
        counts.append(f"**{len(r.stale)} left stale**")
    if r.conflicts:
        counts.append(f"**{len(r.conflicts)} conflict{'s' if len(r.conflicts) != 1 else ''}**")
    if counts:
        out += [" · ".join(counts), ""]
    for t in r.touched[:SHOWN]:
        out.append(
            f"- {STATE_WORDS[t.state]} · **{t.grade}** `{t.id[:12]}` {_md(t.summary)} — "
            f"{t.lines} lines in {len(t.commits)} commit{'s' if len(t.commits) != 1 else ''}: {_files(t)}"
        )
    out += _more(min(SHOWN, n), n)
    if r.unlinked:
        out += [
            "",
            "Link a decision with a `Lifeline: <id>` trailer in a commit, or re-read it and "
            "`git lifeline reaffirm <id>`.",
        ]
    if r.conflicts:
        out += ["", "**Conflicts** (`git lifeline conflicts`):"]
        out += [f"- {_md(c.subject)}: " + ", ".join(f"`{i[:12]}`" for i in c.ids) for c in r.conflicts[:SHOWN]]
        out += _more(min(SHOWN, len(r.conflicts)), len(r.conflicts))
    if r.reaffirmed:
        out += ["", "**Re-affirmed** (stale before, clear now): " + ", ".join(f"`{i[:12]}`" for i in r.reaffirmed)]
    if r.linked:
        out += ["", f"**Linked entries** ({len(r.linked)}):"]
        for e in r.linked[:SHOWN]:
            what = f"{e.kind}: {_md(e.summary or '')}" if e.id else "not in this clone's ledger"
            out.append(f"- `{(e.id or e.trailer)[:12]}` {what} (commit `{e.commit[:10]}`)")
        out += _more(min(SHOWN, len(r.linked)), len(r.linked))
    if r.proposals:
        out += ["", f"**{len(r.proposals)} proposal(s) waiting for review** (`git lifeline review`):"]
        out += [f"- `{p.id[:12]}` {p.kind}: {_md(p.summary)}" for p in r.proposals[:SHOWN]]
        out += _more(min(SHOWN, len(r.proposals)), len(r.proposals))
    out += ["", f"<sub>{r.range.base_name}...{r.range.head_name}: {r.commits} commits · line {_md(r.line)}</sub>"]
    return "\n".join(out) + "\n"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub documents (%, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: the message's escapes, and `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(r: PrReport) -> str:
    """GitHub Actions workflow commands: a mark on the first changed file of each decision."""
    out = []
    budget = {"warning": ANNOTATIONS, "notice": ANNOTATIONS}
    left = 0
    for t in r.touched:
        level = "warning" if t.state == "unlinked" or t.stale else "notice"
        if budget[level] == 0:
            left += 1
            continue
        budget[level] -= 1
        title = f"Lifeline: {t.grade} decision {t.id[:12]} ({t.state})"
        text = f"{visible(t.summary)} — this change touches its code ({t.lines} lines in {len(t.files)} files). " + (
            f"Link it (Lifeline: {t.id[:12]}) or re-read it and run git lifeline reaffirm {t.id[:12]}."
            if t.state == "unlinked"
            else "Linked by this change."
            if t.state == "linked"
            else "Re-affirmed against this code."
        )
        props = f"file={escape_property(t.files[0])},title={escape_property(title)}" if t.files else ""
        out.append(f"::{level} {props}::{escape_data(text)}")
    if left:
        out.append(f"::notice title=Lifeline::{left} more decisions (git lifeline pr --format json)")
    for c in r.conflicts[:ANNOTATIONS]:
        ids = ", ".join(i[:12] for i in c.ids)
        out.append(f"::warning title=Lifeline conflict::{escape_data(visible(c.subject) + ': ' + ids)}")
    if r.proposals:
        out.append(f"::notice title=Lifeline::{len(r.proposals)} proposal(s) waiting for review (git lifeline review)")
    return "\n".join(out) + ("\n" if out else "")


@click.command()
@click.argument("range_spec", metavar="[BASE...HEAD]", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "github", "json"]),
    default="markdown",
    show_default=True,
    help="markdown: a PR comment; github: workflow commands (marks on the diff); json: complete.",
)
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    type=click.Choice(["unlinked", "stale", "conflict"]),
    help="Exit 1 when the range changes governed code without linking or re-affirming its decision "
    "(unlinked), leaves a decision stale (stale), or brings a conflict (conflict). Repeatable.",
)
@line_option
@click.pass_context
def pr(ctx: click.Context, range_spec: Optional[str], fmt: str, fail_on: tuple[str, ...]) -> None:
    """What the commits BASE...HEAD mean for the ledger (default: the upstream, or the
    remote's default branch, against HEAD): the decisions whose code they touch, graded,
    linked or not; the entries they link; proposals waiting; conflicts they bring."""
    from ..app.pr import pr_report

    report = pr_report(open_ledger(ctx, existing=True), range_spec)
    if fmt == "json":
        echo_json(report.to_json())
    else:
        click.echo(markdown(report) if fmt == "markdown" else github(report), nl=False)
    failed = report.failures(fail_on)
    for why in failed:
        click.echo(f"git-lifeline: pr: {why}", err=True)
    if failed:
        sys.exit(1)
