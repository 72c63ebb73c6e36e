"""ctx-compact --at: a percentage that must be a finite number (nan would never trigger)."""

from __future__ import annotations

import pytest
from helpers import run_bytes


@pytest.mark.parametrize("value", ["nan", "NaN", "inf"])
def test_at_must_be_finite(script_runner, value):
    r = run_bytes(script_runner, ["ctx-compact", "--at", value, "--limit", "1000"], b"[]")
    assert r.returncode == 2 and r.stdout == ""
    assert "invalid value for '--at'" in r.stderr


def test_at_in_range_still_works(script_runner):
    msgs = b'[{"role": "user", "content": "hi"}]'
    r = run_bytes(script_runner, ["ctx-compact", "--at", "80", "--limit", "1000"], msgs)
    assert r.returncode == 0 and r.stdout == msgs.decode()
