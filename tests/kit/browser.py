"""Headless Chromium for the HTML view's tests and measurements, and the ledgers they show.

Chromium is driven with its own switches only: `--dump-dom` for the DOM after the page's
script ran, `--screenshot` for a PNG, and `--remote-debugging-pipe` (the DevTools protocol
over two pipes, no network port) to read the page's paint timings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Optional

import pytest

from git_lifeline.app.draft import CheckpointDraft, Draft
from git_lifeline.app.edits import pin
from kit.run import DATA, TIMEOUT, git

ADR_DATA = DATA / "adr"
# one message of the DevTools protocol, decoded JSON whose shape the browser decides (and what a
# page's script returns through it): its values are read by key where used
Message = dict[str, Any]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
]


def chromium() -> Optional[str]:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """The browser, or a skip; in CI (CI=true) a missing browser is a failure, not a skip."""
    found = chromium()
    if found is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("chromium is required in CI (Debian package `chromium`) and was not found")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def _run(args: list[str], timeout: float = TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    with tempfile.TemporaryDirectory(prefix="lifeline-chromium-") as profile:
        return subprocess.run(
            [require_chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, timeout=timeout
        )


def dump_dom(page: Path, fragment: str = "") -> str:
    """The DOM after the page's script ran (virtual time lets its deferred work finish)."""
    proc = _run(["--virtual-time-budget=10000", "--dump-dom", page.resolve().as_uri() + fragment])
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    return proc.stdout.decode("utf-8")


def screenshot(page: Path, out: Path, width: int = 1280, height: int = 2200, dark: bool = False) -> None:
    args = [f"--window-size={width},{height}", "--virtual-time-budget=10000", f"--screenshot={out}"]
    if dark:
        args.insert(0, "--force-dark-mode")
    proc = _run(args + [page.resolve().as_uri()])
    assert proc.returncode == 0 and out.exists(), proc.stderr.decode("utf-8", "replace")[-2000:]


# ---- paint timings over the DevTools protocol (a pipe, not a port) -------------------------
class _Pipe:
    def __init__(self, browser: subprocess.Popen[bytes], write_fd: int, read_fd: int):
        self.browser, self.w, self.r = browser, write_fd, read_fd
        self.buf = b""
        self.next_id = 0
        self.events: list[Message] = []

    def send(self, method: str, params: Optional[Message] = None, session: Optional[str] = None) -> Message:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def read(self) -> Message:
        while b"\0" not in self.buf:
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_event(self, method: str, timeout: float = TIMEOUT) -> Message:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ev in self.events:
                if ev.get("method") == method:
                    self.events.remove(ev)
                    return ev
            self.events.append(self.read())
        raise TimeoutError(method)


_TIMINGS = """(() => {
  const paint = {};
  for (const p of performance.getEntriesByType('paint')) paint[p.name] = p.startTime;
  const nav = performance.getEntriesByType('navigation')[0];
  const mark = performance.getEntriesByName('lifeline-timeline')[0];
  return JSON.stringify({paint, dcl: nav ? nav.domContentLoadedEventEnd : null, load: nav ? nav.loadEventEnd : null,
                         timeline: mark ? mark.startTime : null, rows: document.querySelectorAll('.entry').length});
})()"""


def paint_timings(page: Path, width: int = 1280, height: int = 900) -> Message:
    """First paint, first contentful paint, DOMContentLoaded, load and the timeline's first
    rows (ms from navigation start) of one cold load of `page` in a fresh browser."""
    browser_in_r, browser_in_w = os.pipe()  # we write, the browser reads (its fd 3)
    browser_out_r, browser_out_w = os.pipe()  # the browser writes (its fd 4), we read
    with tempfile.TemporaryDirectory(prefix="lifeline-chromium-") as profile:

        def fds() -> None:
            os.dup2(browser_in_r, 3)
            os.dup2(browser_out_w, 4)

        proc = subprocess.Popen(
            [
                require_chromium(),
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=fds,
        )
        os.close(browser_in_r)
        os.close(browser_out_w)
        pipe = _Pipe(proc, browser_in_w, browser_out_r)
        try:
            target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            pipe.send("Page.enable", session=session)
            pipe.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
            pipe.wait_event("Page.loadEventFired")
            deadline = time.monotonic() + 30
            while True:
                got = json.loads(
                    pipe.send("Runtime.evaluate", {"expression": _TIMINGS, "returnByValue": True}, session=session)[
                        "result"
                    ]["value"]
                )
                if (
                    "first-contentful-paint" in got["paint"] and got["timeline"] is not None
                ) or time.monotonic() > deadline:
                    return got
                time.sleep(0.05)
        finally:
            try:
                pipe.send("Browser.close")
            except (RuntimeError, OSError):
                pass
            os.close(browser_in_w)
            os.close(browser_out_r)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ---- ledgers to show -------------------------------------------------------------------------
def build_demo(repo: Path, hostile: bool = True) -> dict[str, str]:
    """A small, realistic ledger: ADRs imported, conflicting and stale decisions, a revision,
    a revert, a pin, open items, two threads with checkpoints, and (`hostile`) an entry made
    of markup and script. Returns the ids by name."""
    from git_lifeline.app.adr import import_adrs
    from git_lifeline.app.workspace import Workspace

    led = Workspace.open(str(repo)).ledger()
    ids: dict[str, str] = {}

    def log(name: str, kind: str, summary: str, body: str = "", when: str = "", parents: Sequence[str] = ()) -> str:
        out = led.log(Draft(kind=kind, summary=summary, body=body, ts=when or None, parents=tuple(parents)))
        ids[name] = out.entry.id
        return out.entry.id

    log(
        "boot",
        "bootstrap",
        "Billing service of the shop: invoices, payments and reminders",
        "Replaces the invoicing scripts of the old shop. Owned by the payments team.",
        "2023-03-01T09:00:00Z",
    )
    out = import_adrs(led, ADR_DATA / "adr-tools")
    ids.update({f"adr:{e.summary}": e.id for e in out.added})
    log(
        "redis",
        "decision",
        "Cache: Redis for sessions and rate limits",
        "subject: cache\n\nOne Redis instance already runs for the shop; sessions survive deploys.",
        "2024-01-10T10:00:00Z",
    )
    log(
        "memcached",
        "decision",
        "Cache: Memcached in front of the catalogue API",
        "subject: cache\n\nThe catalogue team benchmarked Memcached 20% faster for their read pattern.",
        "2024-02-01T15:30:00Z",
    )
    log(
        "api",
        "decision",
        "API: REST with JSON envelopes, versioned in the path",
        "paths: src/api/**\n\nClients are mobile apps we cannot force to update; /v1/ stays until usage is zero.",
        "2024-02-12T11:00:00Z",
    )
    log(
        "retries",
        "decision",
        "Retries: three attempts with exponential backoff",
        "The PSP times out under load; three attempts cover 99% of the blips we saw.",
        "2024-03-04T08:00:00Z",
    )
    log(
        "retries2",
        "correction",
        "Retries: five attempts with jitter",
        "Three attempts in lockstep made the retries themselves a thundering herd (incident of 2024-04-02).",
        "2024-04-03T09:00:00Z",
        parents=[ids["retries"]],
    )
    log(
        "flags",
        "decision",
        "Feature flags live in the database",
        "A flags table is enough for now; no new service.",
        "2024-04-20T14:00:00Z",
    )
    log(
        "flags-revert",
        "correction",
        "Revert: feature flags live in the database",
        "action: revert\n\nThe ADR on flags is still a draft; nothing decided yet.",
        "2024-04-22T09:00:00Z",
        parents=[ids["flags"]],
    )
    log(
        "incident",
        "incident",
        "PSP timeouts doubled the retry load",
        "Every client retried at the same moments; the PSP rate-limited us for 20 minutes.",
        "2024-04-02T16:00:00Z",
    )
    log(
        "recon-open",
        "open",
        "How do we reconcile payments the PSP reports a day late?",
        "Late reports leave invoices unpaid overnight and trigger wrong reminders.",
        "2024-05-02T10:00:00Z",
    )
    if hostile:
        log(
            "xss",
            "note",
            "Summary with <script>document.body.dataset.pwned = 1</script> & <b>tags</b>",
            "Body </script><script>document.body.dataset.pwned = 2</script> <img src=x onerror=\"document.title='x'\">",
            "2024-05-03T10:00:00Z",
        )
    led.log(
        Draft(
            kind="note",
            summary="Late PSP reports arrive as a nightly CSV",
            body="Field 7 is the settlement date, not the payment date.",
            ts="2024-05-06T10:00:00Z",
            thread="reconciliation",
        )
    )
    led.log(
        Draft(
            kind="feature",
            summary="Import the nightly PSP CSV",
            body="Matched on the PSP reference; unmatched rows go to a queue.",
            ts="2024-05-09T10:00:00Z",
            agent="claude-code",
            thread="reconciliation",
        )
    )
    led.checkpoint(
        CheckpointDraft(
            "reconciliation",
            {
                "goal": ["Invoices settle from the PSP's late report"],
                "done": ["CSV import with matching on the PSP reference"],
                "next": ["Hold reminders while a payment is pending in the CSV"],
                "blocked": ["Sample files from the PSP for refunds"],
            },
        )
    )
    led.log(
        Draft(
            kind="note",
            summary="Reminders run at 06:00, the CSV at 04:00",
            body="So holding reminders needs only the CSV import's result.",
            ts="2024-05-10T10:00:00Z",
            thread=ids["recon-open"][:12],
        )
    )
    led.checkpoint(
        CheckpointDraft(ids["recon-open"][:12], {"next": ["Write the reminder hold"], "tried": ["A fixed 24h delay"]})
    )
    log(
        "release",
        "release",
        "Billing 2.4: PSP retries with jitter, CSV reconciliation",
        "Deployed to production on a Tuesday morning.",
        "2024-05-14T07:00:00Z",
    )
    pin(led, ids["retries2"])
    (repo / "src" / "api").mkdir(parents=True, exist_ok=True)
    (repo / "src" / "api" / "invoices.py").write_text("def list_invoices():\n    return []\n")
    git(repo, "add", "src/api/invoices.py")
    git(repo, "commit", "-q", "-m", "api: list invoices")
    return ids


def synthetic(repo: Path, n: int) -> None:
    """n entries as a busy team writes them: decisions and their revisions, notes, features,
    fixes, incidents, open items, threads with checkpoints; bodies of a few sentences."""
    from git_lifeline.app.workspace import Workspace
    from git_lifeline.core import blocks
    from git_lifeline.core.entry import Entry, new_entry

    led = Workspace.open(str(repo)).ledger()
    author = led.default_author()
    t0 = datetime(2022, 1, 1, tzinfo=timezone.utc)
    entries: list[Entry] = []
    decisions: list[str] = []
    opens: list[str] = []
    threads = [f"stream-{k}" for k in range(12)]
    cycle = (
        "decision",
        "note",
        "feature",
        "decision",
        "fix",
        "note",
        "checkpoint",
        "correction",
        "incident",
        "open",
        "note",
        "test",
        "decision",
        "debt",
        "release",
        "note",
        "correction",
        "feature",
        "note",
        "fix",
    )
    for i in range(n):
        kind = cycle[i % len(cycle)]
        ts = t0 + timedelta(minutes=53 * i)
        area = ("billing", "api", "search", "auth", "storage", "mobile", "infra")[i % 7]
        body = (
            f"Entry {i} in {area}: the team compared two options on cost, risk and time to ship. "
            f"The chosen one keeps the {area} code simple and lets us revisit it after the next release.\n\n"
            f"Measured: p95 latency {20 + i % 50} ms, error rate {(i % 9) / 10:.1f}%."
        )
        parents: list[str] = []
        # subjects ("Billing 12: ...") repeat now and then, as decisions on one question do
        summary = f"{area.capitalize()} {i % 41}: option {i % 5} chosen for item {i}"
        if kind == "correction" and decisions:
            target = decisions.pop(-(1 + i % 3) if len(decisions) > 3 else -1)
            parents = [target]
            summary = f"{area.capitalize()} {i % 41}: revised choice {i}"
            if i % 3 == 0:
                body = "action: revert\n\n" + body
        elif kind == "checkpoint":
            thread = threads[i % len(threads)]
            body = (
                blocks.render_header({"thread": thread})
                + blocks.render_list_block("next", [f"step {i}"])
                + blocks.render_list_block("done", [f"step {i - 20}"])
            )
            summary = f"checkpoint {thread}: step {i}"
        elif kind == "note" and i % 4 == 0:
            body = blocks.render_header({"thread": threads[i % len(threads)]}) + body
        e = new_entry(kind=kind, summary=summary, body=body, author=author, parents=parents, ts=ts)
        entries.append(e)
        if kind == "decision" or (kind == "correction" and "action: revert" not in body):
            decisions.append(e.id)
        if kind == "open":
            opens.append(e.id)
    from git_lifeline.app.interop import _bulk_append

    _bulk_append(led, entries)
