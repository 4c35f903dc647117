"""`--allow-host NAME` accepts the Host header `NAME` as a proxy's `proxy_set_header Host
$host` forwards it (no port), and `NAME:PORT`; any other name is still refused with 421,
and a HOST given with its port stays that exact host and port."""

from __future__ import annotations

from kit.home import hermetic  # noqa: F401
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.servers import http_server, post

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def test_a_host_allowed_without_a_port_is_accepted_bare_and_on_any_port_and_no_other(repo):
    with http_server(repo, "--allow-host", "ledger.example.com", "--allow-host", "other.example:8443") as server:
        for host, code in [
            ("ledger.example.com", 200),
            ("ledger.example.com:443", 200),
            ("other.example:8443", 200),
            ("other.example", 421),
            ("other.example:9000", 421),
            ("ledger.example.com.evil.example", 421),
            ("evil.example", 421),
        ]:
            assert post(server.url, LIST, headers={"host": host}).status_code == code, host
