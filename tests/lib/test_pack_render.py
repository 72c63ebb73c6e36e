"""ctx-pack's rendering as a library: code fences longer than any backtick run inside."""

from __future__ import annotations


def test_fences_outgrow_backtick_runs_inside_the_text():
    from ctxtools.pack.render import _fence

    text = "intro\n````python\n   ```\ncode\n"
    fenced = _fence(text, "text")
    assert fenced.startswith("`````text\n") and fenced.endswith("\n`````\n")
    assert fenced[len("`````text\n") : -len("`````\n")] == text
    assert _fence("no ticks") == "```\nno ticks\n```\n"
