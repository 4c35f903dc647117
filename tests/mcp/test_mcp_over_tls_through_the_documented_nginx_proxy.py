"""docs/nginx-lifeline.conf, the file users copy, run by a real nginx on 127.0.0.1 with a
certificate made here, in front of a real `git lifeline mcp --http`: the MCP SDK's Streamable
HTTP client talks TLS through it, and the server's Host and Origin checks and its rate limit
still hold behind it. Skipped only where nginx is absent outside CI (CI installs it)."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Iterator

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kit.home import hermetic  # noqa: F401
from kit.mcp_client import drive
from kit.repos import repo_with_a_commit  # noqa: F401
from kit.run import ROOT, cli
from kit.servers import ACCEPT, free_port, http_server, listening
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from git_lifeline.app.agents import Agents
from git_lifeline.app.workspace import Workspace

PUBLIC = "ledger.example.com"  # the example's public name; the client reaches it at 127.0.0.1
EXAMPLE = ROOT / "docs" / "nginx-lifeline.conf"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
START_SECONDS = 20


def require_nginx() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)
    if found is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("nginx is required in CI (Debian package `nginx`) and was not found")
        pytest.skip("nginx is not installed (apt-get install nginx)")
    return found


def certificates(where: Path) -> tuple[Path, Path, Path]:
    """A test CA, and the server's certificate for PUBLIC and 127.0.0.1 signed by it:
    (ca.pem, server.pem, server.key)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lifeline test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PUBLIC)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(PUBLIC), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = where / "ca.pem", where / "server.pem", where / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


def replaced(text: str, old: str, new: str) -> str:
    """`text` with `old`, which the example must hold exactly once, made `new`."""
    assert text.count(old) == 1, f"docs/nginx-lifeline.conf no longer holds {old!r} once"
    return text.replace(old, new)


def site(where: Path, tls_port: int, plain_port: int, upstream_port: int) -> Path:
    """The example as a user deploys it, changed only where a test must: the ports (all on
    127.0.0.1) and the certificate's paths."""
    _, cert, key = certificates(where)
    text = EXAMPLE.read_text()
    text = replaced(text, "listen 443 ssl", f"listen 127.0.0.1:{tls_port} ssl")
    text = replaced(text, "listen 80;", f"listen 127.0.0.1:{plain_port};")
    text = replaced(text, f"/etc/ssl/certs/{PUBLIC}.pem", str(cert))
    text = replaced(text, f"/etc/ssl/private/{PUBLIC}.key", str(key))
    assert text.count("http://127.0.0.1:8808;") == 2
    text = text.replace("http://127.0.0.1:8808;", f"http://127.0.0.1:{upstream_port};")
    conf = where / "lifeline.conf"
    conf.write_text(text)
    return conf


@contextlib.contextmanager
def nginx(where: Path, upstream_port: int) -> Iterator[tuple[int, int]]:
    """nginx in the foreground, one process, everything under `where`, serving the example
    as Debian's nginx.conf would include it (inside `http`); yields its TLS and plain ports."""
    binary = require_nginx()
    tls_port, plain_port = free_port(), free_port()
    conf = site(where, tls_port, plain_port, upstream_port)
    temp = where / "temp"
    temp.mkdir()
    main = where / "nginx.conf"
    main.write_text(
        f"daemon off;\nmaster_process off;\npid {where / 'nginx.pid'};\nerror_log {where / 'error.log'} info;\n"
        "events { worker_connections 64; }\n"
        "http {\n"
        f"  access_log {where / 'access.log'};\n"
        + "".join(
            f"  {kind}_temp_path {temp / kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        + f"  include {conf};\n"
        "}\n"
    )
    checked = subprocess.run(
        [binary, "-t", "-p", str(where), "-e", str(where / "error.log"), "-c", str(main)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert checked.returncode == 0, f"nginx refuses the documented example: {checked.stderr}"
    log = open(where / "nginx.out", "wb")
    proc = subprocess.Popen(
        [binary, "-p", str(where), "-e", str(where / "error.log"), "-c", str(main)], stdout=log, stderr=log
    )
    try:
        with listening(proc, tls_port, lambda: (where / "error.log").read_text(errors="replace")):
            yield tls_port, plain_port
    finally:
        log.close()


def trust(where: Path) -> ssl.SSLContext:
    """Only the test CA: the client verifies the proxy's certificate for real."""
    return ssl.create_default_context(cafile=str(where / "ca.pem"))


def public_headers(port: int, token: str) -> dict[str, str]:
    """What a client of https://ledger.example.com:PORT/mcp sends (reached at 127.0.0.1)."""
    return {"Host": f"{PUBLIC}:{port}", "Authorization": f"Bearer {token}"}


def new_token(repo: Path, name: str) -> str:
    return cli(repo, "mcp", "token", "add", name, expect=0).out.strip().splitlines()[-1]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_client_reads_and_proposes_over_tls_through_the_documented_proxy(repo, tmp_path, mode):
    token = new_token(repo, "hosted-bot")
    where = tmp_path / "nginx"
    where.mkdir()
    with http_server(repo, "--allow-host", PUBLIC) as server, nginx(where, server.port) as (port, _):
        url = f"https://127.0.0.1:{port}/mcp"

        async def scenario() -> None:
            http = httpx2.AsyncClient(
                headers=public_headers(port, token), verify=trust(where), timeout=httpx2.Timeout(60.0)
            )
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert {"lifeline_context", "lifeline_append"} <= names
                context = await c.call_tool("lifeline_context", {})
                assert not context.is_error, context.content[0].text
                wrote = await c.call_tool(
                    "lifeline_append",
                    {"kind": "decision", "summary": "Serve agents over TLS", "body": "Hosted agents need it."},
                )
                assert not wrote.is_error, wrote.content[0].text

        drive(scenario)
        access = (where / "access.log").read_text()
    [proposal] = Agents(Workspace.open(str(repo)).ledger()).proposals()
    assert proposal.content.agent == "hosted-bot" and proposal.record.via == "http"
    assert "POST /mcp" in access, "the calls did not go through the proxy"
    assert token not in access, "the proxy logged the bearer token"


def test_behind_the_proxy_a_foreign_host_or_origin_is_still_refused_and_plain_http_is_redirected(repo, tmp_path):
    token = new_token(repo, "hosted-bot")
    where = tmp_path / "nginx"
    where.mkdir()
    with http_server(repo, "--allow-host", PUBLIC) as server, nginx(where, server.port) as (port, plain):
        url = f"https://127.0.0.1:{port}/mcp"

        def post(headers: dict[str, str]) -> httpx2.Response:
            sent = {"content-type": "application/json", "accept": ACCEPT, **public_headers(port, token), **headers}
            return httpx2.post(url, json=LIST, headers=sent, verify=trust(where), timeout=60)

        assert post({}).status_code == 200
        assert post({"Host": "evil.example"}).status_code == 421  # nginx forwards the Host it got
        assert post({"Origin": "https://evil.example"}).status_code == 403
        assert post({"Authorization": "Bearer llt_not-a-token"}).status_code == 401
        refused = httpx2.get(f"https://127.0.0.1:{port}/", headers={"Host": PUBLIC}, verify=trust(where), timeout=60)
        assert refused.status_code == 404, "the proxy serves only /mcp and the metadata"
        plain_http = httpx2.post(f"http://127.0.0.1:{plain}/mcp", json=LIST, headers={"Host": PUBLIC}, timeout=60)
        assert plain_http.status_code == 301 and plain_http.headers["location"] == f"https://{PUBLIC}/mcp"


def test_behind_the_proxy_a_client_cannot_escape_the_rate_limit_by_forging_x_forwarded_for(repo, tmp_path):
    # Without tokens (loopback only) the rate limit counts per client address, which the
    # server takes from the proxy's X-Forwarded-For: the proxy must set it, not append to it.
    where = tmp_path / "nginx"
    where.mkdir()
    with (
        http_server(repo, "--allow-host", PUBLIC, "--rate-limit", "2") as server,
        nginx(where, server.port) as (port, _),
    ):
        url = f"https://127.0.0.1:{port}/mcp"
        codes = []
        for i in range(3):
            sent = {
                "content-type": "application/json",
                "accept": ACCEPT,
                "Host": PUBLIC,
                "X-Forwarded-For": f"198.51.100.{i}",
            }
            codes.append(httpx2.post(url, json=LIST, headers=sent, verify=trust(where), timeout=60).status_code)
        assert codes == [200, 200, 429], codes
