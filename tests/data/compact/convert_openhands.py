"""Turn OpenHands evaluation runs into OpenAI chat ``messages`` and Anthropic Messages requests.

Usage (from the repository root)::

    python tests/data/compact/convert_openhands.py \
        tests/data/compact/openhands-multi-swe-bench-output.jsonl OUTDIR

writes ``OUTDIR/<instance_id>.openai.json`` and ``OUTDIR/<instance_id>.anthropic.json`` for
every run. The input here holds three runs of OpenHands' Multi-SWE-bench evaluation output
(ponyc; MIT, see LICENSE-OpenHands beside this file). The tests and bench/bench_compact.py
import ``runs_from_jsonl``, ``to_openai`` and ``to_anthropic`` directly.

OpenAI messages, in event order:

* the ``system`` action -> ``{"role": "system"}``; the user's ``message`` -> ``{"role": "user"}``;
* an agent action with ``tool_call_metadata`` -> the assistant message of its
  ``model_response`` (content and ``tool_calls``; emitted once when one response made several
  calls);
* an observation with a ``tool_call_id`` -> ``{"role": "tool", "tool_call_id", "content"}``,
  the content as OpenHands shows it to the model (command output followed by its
  ``[The command completed with exit code N.]`` suffix);
* an observation without a call (an ``error`` the runtime raised) -> a user message;
* ``recall`` events are dropped (they carry no text for the model); the final ``finish`` call,
  which never gets a result, becomes a plain assistant message with the final thought.

Anthropic mechanically from that: the system message becomes the top-level ``system``,
assistant tool calls become ``tool_use`` blocks (``input`` = the parsed arguments), tool
messages become ``tool_result`` blocks in the following user turn, and consecutive user
messages are merged into one turn (tool results first), so roles alternate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def runs_from_jsonl(path: str | Path) -> list[dict]:
    runs = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                runs.append(json.loads(line))
    return runs


def _tool_text(event: dict) -> str:
    content = event.get("content") or ""
    extras = event.get("extras") or {}
    meta = extras.get("metadata") if isinstance(extras, dict) else None
    if event.get("observation") == "run" and isinstance(meta, dict):
        return f"{meta.get('prefix') or ''}{content}{meta.get('suffix') or ''}"
    return content


def to_openai(run: dict) -> list[dict]:
    """The OpenAI ``messages`` of one OpenHands run (see the module docstring)."""
    messages: list[dict] = []
    seen_responses: set[str] = set()
    answered: set[str] = set()
    for event in run["history"]:
        action = event.get("action")
        observation = event.get("observation")
        meta = event.get("tool_call_metadata")
        if action == "system":
            messages.append({"role": "system", "content": event["args"]["content"]})
        elif action == "message" and event.get("source") == "user":
            messages.append({"role": "user", "content": event["args"]["content"]})
        elif action and meta:
            response = meta["model_response"]
            if response["id"] in seen_responses:
                continue
            seen_responses.add(response["id"])
            msg = response["choices"][0]["message"]
            out: dict = {"role": "assistant", "content": msg.get("content") or ""}
            calls = []
            for call in msg.get("tool_calls") or []:
                calls.append(
                    {
                        "id": call["id"],
                        "type": call.get("type", "function"),
                        "function": {
                            "name": call["function"]["name"],
                            "arguments": call["function"]["arguments"],
                        },
                    }
                )
            if action == "finish":
                final = (event.get("args") or {}).get("final_thought") or ""
                out["content"] = "\n\n".join(t for t in (out["content"], final) if t)
            elif calls:
                out["tool_calls"] = calls
            messages.append(out)
        elif observation and meta and observation != "recall":
            call_id = meta["tool_call_id"]
            if call_id in answered:
                continue
            answered.add(call_id)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": _tool_text(event)})
        elif observation == "error":
            messages.append({"role": "user", "content": event.get("content") or ""})
    # A call whose result never came (the run was cut short) is dropped from its message.
    for msg in messages:
        if msg.get("tool_calls"):
            msg["tool_calls"] = [c for c in msg["tool_calls"] if c["id"] in answered]
            if not msg["tool_calls"]:
                del msg["tool_calls"]
    return messages


def to_anthropic(messages: list[dict], model: str = "claude-sonnet-4-5") -> dict:
    """An Anthropic Messages request built mechanically from OpenAI MESSAGES."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    out: list[dict] = []
    for m in messages:
        role = m["role"]
        if role == "system":
            continue
        if role == "assistant":
            blocks: list[dict] = []
            if m.get("content"):
                blocks.append({"type": "text", "text": m["content"]})
            for call in m.get("tool_calls") or []:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "input": json.loads(call["function"]["arguments"] or "{}"),
                    }
                )
            if not blocks:
                blocks.append({"type": "text", "text": "(no content)"})
            out.append({"role": "assistant", "content": blocks})
            continue
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": m["tool_call_id"],
                "content": m["content"],
            }
        else:
            block = {"type": "text", "text": m["content"]}
        if out and out[-1]["role"] == "user":
            prev = out[-1]["content"]
            if block["type"] == "tool_result":
                # tool results come first in a user turn
                at = sum(1 for b in prev if b["type"] == "tool_result")
                prev.insert(at, block)
            else:
                prev.append(block)
        else:
            out.append({"role": "user", "content": [block]})
    return {"model": model, "max_tokens": 4096, "system": system, "messages": out}


def main(argv: list[str]) -> int:
    src, outdir = argv[1], Path(argv[2])
    outdir.mkdir(parents=True, exist_ok=True)
    for run in runs_from_jsonl(src):
        msgs = to_openai(run)
        name = run["instance_id"]
        (outdir / f"{name}.openai.json").write_text(
            json.dumps(msgs, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
        (outdir / f"{name}.anthropic.json").write_text(
            json.dumps(to_anthropic(msgs), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
