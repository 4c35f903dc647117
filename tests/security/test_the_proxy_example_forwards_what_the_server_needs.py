"""docs/nginx-lifeline.conf, the documented TLS proxy, forwards what `mcp --http` needs: the
two paths, the public Host (checked by the DNS-rebinding protection), unbuffered streams, a
body bound no larger than the server's, and only to 127.0.0.1."""

from __future__ import annotations

import re

from kit.run import ROOT

from git_lifeline.mcp.http import MAX_BODY_BYTES

CONF = (ROOT / "docs" / "nginx-lifeline.conf").read_text()


def blocks() -> dict[str, str]:
    """location path -> its directives (the example has no nested braces inside a location)."""
    return {m.group(1).split()[-1]: m.group(2) for m in re.finditer(r"location\s+([^{]+?)\s*\{([^}]*)\}", CONF)}


def test_the_proxy_example_forwards_the_mcp_path_and_the_metadata_to_loopback_only():
    found = blocks()
    assert "/mcp" in found and "/.well-known/oauth-protected-resource" in found
    for path in ("/mcp", "/.well-known/oauth-protected-resource"):
        assert re.search(r"proxy_pass\s+http://127\.0\.0\.1:\d+;", found[path]), path
        assert re.search(r"proxy_set_header\s+Host\s+\$host;", found[path]), path
    assert "proxy_pass" not in found["/"]
    assert re.findall(r"proxy_pass\s+(\S+);", CONF) == ["http://127.0.0.1:8808"] * 2


def test_the_proxy_example_streams_unbuffered_and_bounds_bodies_within_the_servers_bound():
    mcp = blocks()["/mcp"]
    assert re.search(r"proxy_buffering\s+off;", mcp) and re.search(r"proxy_http_version\s+1\.1;", mcp)
    assert re.search(r"X-Forwarded-Proto\s+\$scheme;", mcp)
    size = re.search(r"client_max_body_size\s+(\d+)k;", CONF)
    assert size is not None and int(size.group(1)) * 1024 <= MAX_BODY_BYTES
    assert "http_authorization" not in CONF.replace("keep $http_authorization out", "")
    assert re.search(r"listen\s+443\s+ssl;", CONF) and "TLSv1.3" in CONF
