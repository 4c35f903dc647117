"""`python -m git_lifeline.mcp [--repo PATH] [--line NAME]`: the MCP face as its own program.

`git lifeline mcp` hands over to it (the CLI and the MCP server are two faces; neither
imports the other). Failures go through errors.describe_failure, like every face."""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from ..errors import INTERRUPTED, describe_failure


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(prog="git lifeline mcp",
                                     description="Run the MCP server on stdio, for AI agents.")
    parser.add_argument("--repo", default=None, help="The repository (default: the one containing the cwd).")
    parser.add_argument("--line", default=None, help="The line served by default.")
    parser.add_argument("--check", action="store_true",
                        help="Check that the server could serve (repository, line, MCP SDK), say so, and exit.")
    args = parser.parse_args(argv)
    try:
        from .server import check, serve
        if args.check:
            print(check(args.repo, args.line))
            return 0
        serve(args.repo, args.line)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:  # the one boundary: a message and an exit code, never a traceback
        message, code = describe_failure(exc)
        print(f"git-lifeline: {message}", file=sys.stderr)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
