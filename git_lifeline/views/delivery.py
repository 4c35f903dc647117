"""The same context in each provider's system-message shape (valid JSON)."""

from __future__ import annotations

import json

from ..core.json_input import JSON, JSONObject

FORMATS = ("generic", "anthropic", "openai", "gemini")


def deliver(stable: str, volatile: str, fmt: str) -> str:
    if fmt == "generic":
        return stable + volatile
    if fmt == "anthropic":
        # The stable prefix carries cache_control so a prompt cache can reuse it.
        blocks: list[JSON] = []
        if stable:
            blocks.append({"type": "text", "text": stable, "cache_control": {"type": "ephemeral"}})
        if volatile:
            blocks.append({"type": "text", "text": volatile})
        doc: JSONObject = {"system": blocks}
    elif fmt == "openai":
        doc = {"messages": [{"role": "system", "content": stable + volatile}]}
    elif fmt == "gemini":
        doc = {"system_instruction": {"parts": [{"text": t} for t in (stable, volatile) if t]}}
    else:
        raise ValueError(fmt)
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
