"""Token checks for the session service.

A token is three base64url parts joined by dots: header, claims, signature. The
signature is an HMAC-SHA256 of the first two parts under the service's secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

CLOCK_SKEW = 30  # seconds of tolerance between our clock and the issuer's


class TokenError(Exception):
    """A token that cannot be trusted."""


@dataclass(frozen=True)
class Claims:
    subject: str
    issued_at: int
    expires_at: int
    scopes: tuple[str, ...] = ()

    def allows(self, scope: str) -> bool:
        return scope in self.scopes


def _b64decode(part: str) -> bytes:
    padding = "=" * (-len(part) % 4)
    return base64.urlsafe_b64decode(part + padding)


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def sign(claims: Claims, secret: bytes) -> str:
    header = _b64encode(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64encode(
        json.dumps(
            {
                "sub": claims.subject,
                "iat": claims.issued_at,
                "exp": claims.expires_at,
                "scp": list(claims.scopes),
            }
        ).encode()
    )
    mac = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64encode(mac)}"


def verify_token(token: str, secret: bytes, now: float | None = None) -> Claims:
    """Check the signature and the expiry of TOKEN; return its claims."""
    try:
        header, body, signature = token.split(".")
    except ValueError:
        raise TokenError("a token has three parts") from None
    expected = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, _b64decode(signature)):
        raise TokenError("bad signature")
    data = json.loads(_b64decode(body))
    claims = Claims(
        subject=data["sub"],
        issued_at=int(data["iat"]),
        expires_at=int(data["exp"]),
        scopes=tuple(data.get("scp", ())),
    )
    now = time.time() if now is None else now
    if claims.expires_at + CLOCK_SKEW < now:
        raise TokenError("token expired")
    return claims


class SessionStore:
    """Sessions by id, in memory; a real deployment puts them in Redis."""

    def __init__(self, secret: bytes):
        self.secret = secret
        self._sessions: dict[str, Claims] = {}

    def open(self, session_id: str, token: str) -> Claims:
        claims = verify_token(token, self.secret)
        self._sessions[session_id] = claims
        return claims

    def close(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def get(self, session_id: str) -> Claims | None:
        return self._sessions.get(session_id)

    def sweep(self, now: float | None = None) -> int:
        """Forget expired sessions; return how many were forgotten."""
        now = time.time() if now is None else now
        stale = [sid for sid, c in self._sessions.items() if c.expires_at < now]
        for sid in stale:
            del self._sessions[sid]
        return len(stale)
