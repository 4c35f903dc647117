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


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(prog="git lifeline mcp", description="Run the MCP server on stdio, for AI agents.")
    parser.add_argument("--repo", default=None, help="The repository (default: the one containing the cwd).")
    parser.add_argument("--line", default=None, help="The line served by default.")
    parser.add_argument(
        "--check",
        action="store_true",
        help="Check that the server could serve (repository, line, MCP SDK), say so, and exit.",
    )
    args = parser.parse_args(argv)
    try:
        from .server import check, serve

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
