"""`git lifeline model fetch`: the one place that downloads, checked against pinned sha256.

A local HTTP server on 127.0.0.1 plays the model hub, serving the test model's files."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading

import pytest
from kit.run import TESTS

from git_lifeline.app import models
from git_lifeline.errors import LifelineError

MODEL = TESTS / ".model" / "all-MiniLM-L6-v2"
pytestmark = pytest.mark.skipif(
    not (MODEL / "model.safetensors").is_file(), reason="no test model (tests/fetch_test_model.py)"
)


@pytest.fixture
def hub(tmp_path):
    served = tmp_path / "hub"
    shutil.copytree(MODEL, served)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_fetch_downloads_every_pinned_file_and_a_second_fetch_downloads_nothing(hub, tmp_path):
    _, url = hub
    seen = []
    dest = models.fetch(tmp_path / "cache", source=url, progress=lambda name, done, total: seen.append(name))
    assert models.missing_or_changed(dest) == []
    assert set(seen) == set(models.FILES)
    seen.clear()
    models.fetch(dest, source=url, progress=lambda name, done, total: seen.append(name))
    assert seen == []


def test_a_download_that_differs_from_its_pinned_sha256_is_refused_and_nothing_is_kept(hub, tmp_path):
    served, url = hub
    (served / "config.json").write_text('{"hidden_size": 1}')
    with pytest.raises(LifelineError, match="sha256"):
        models.fetch(tmp_path / "cache", source=url)
    assert not (tmp_path / "cache" / "config.json").exists()
    assert not [p for p in (tmp_path / "cache").rglob("*.part")]


def test_fetch_refuses_a_plain_http_source_that_is_not_this_machine(tmp_path):
    with pytest.raises(LifelineError, match="only https"):
        models.fetch(tmp_path / "cache", source="http://example.invalid/")


ENDLESS_CAP = 64 << 20  # the test server's own bound: far past every pinned size but the model's


class _Endless(http.server.BaseHTTPRequestHandler):
    """A hub that answers every file with bytes until the client hangs up (or ENDLESS_CAP)."""

    sent = 0

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        chunk = b"x" * 65536
        try:
            while _Endless.sent < ENDLESS_CAP:
                self.wfile.write(chunk)
                _Endless.sent += len(chunk)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def test_a_download_stops_at_its_pinned_size_whatever_the_server_sends(tmp_path):
    # issue 28: it streamed until the server stopped and checked the hash only then
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(LifelineError, match="more than its pinned 612 bytes"):
            models.fetch(
                tmp_path / "cache",
                source=f"http://127.0.0.1:{server.server_address[1]}/",
                files={"config.json": models.FILES["config.json"]},
            )
    finally:
        server.shutdown()
        server.server_close()
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
