"""`python -m git_lifeline.mcp [--repo PATH] [--line NAME]`: the MCP face as its own program.

`git lifeline mcp` hands over to it (the CLI and the MCP server are two faces; neither
imports the other). Failures go through errors.as_failure, like every face, and reach
stderr (a terminal, or the client's log) as the CLI prints them: each line made visible
(app/visible.py), so a path or name in a message cannot drive the terminal."""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from ..app.visible import shown_lines, visible
from ..errors import INTERRUPTED, as_failure


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="git lifeline mcp", description="Run the MCP server on stdio, for AI agents.")
    parser.add_argument("--repo", default=None, help="The repository (default: the one containing the cwd).")
    parser.add_argument("--line", default=None, help="The line served by default.")
    parser.add_argument(
        "--check",
        action="store_true",
        help="Check that the server could serve (repository, line, MCP SDK), say so, and exit.",
    )
    http = parser.add_argument_group("HTTP (docs/INTEGRATION.md, docs/SECURITY.md)")
    http.add_argument(
        "--http", metavar="[HOST:]PORT", default=None, help="Serve Streamable HTTP at /mcp instead of stdio."
    )
    http.add_argument("--token-file", default=None, help="Bearer tokens made by `git lifeline mcp token add`.")
    http.add_argument("--issuer", default=None, help="OAuth: the authorization server's issuer URL.")
    http.add_argument("--audience", default=None, help="OAuth: this server's resource URL (the tokens' aud).")
    http.add_argument("--jwks", default=None, help="OAuth: the issuer's JWKS, a URL or a JSON file.")
    http.add_argument("--allow-origin", action="append", default=[], help="Another Origin browsers may call from.")
    http.add_argument("--allow-host", action="append", default=[], help="Another Host header (the proxy's name).")
    http.add_argument("--remote", default=None, help="The remote to refresh from and publish to (default: origin).")
    http.add_argument("--refresh", type=float, default=5.0, help="Pull from the remote at most every N seconds.")
    http.add_argument("--rate-limit", type=int, default=None, help="Calls per minute per token (0: none).")
    args = parser.parse_args(argv)
    try:
        from .server import check, serve

        if args.http is not None:
            from .http import DEFAULT_RATE, HttpOptions, parse_address, serve_http

            host, port = parse_address(args.http)
            opts = HttpOptions(
                bind=host,
                port=port,
                token_file=args.token_file,
                issuer=args.issuer,
                audience=args.audience,
                jwks=args.jwks,
                allow_origins=args.allow_origin,
                allow_hosts=args.allow_host,
                remote=args.remote,
                refresh_seconds=max(0.0, args.refresh),
                rate_per_minute=DEFAULT_RATE if args.rate_limit is None else max(0, args.rate_limit),
            )
            serve_http(args.repo, args.line, opts)
            return 0
        if args.check:
            print(visible(check(args.repo, args.line)))
            return 0
        serve(args.repo, args.line)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:  # the one boundary: a message and an exit code, never a traceback
        failure = as_failure(exc)
        print(shown_lines(failure.lines_after("git-lifeline: ")), file=sys.stderr)
        return failure.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
