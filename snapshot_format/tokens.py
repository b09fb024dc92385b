"""The token store of ``kivgraph serve --http``: who may call, with which scope, seeing which repositories.

``kivgraph token create|revoke`` writes it (``STATE/tokens.json``, mode 0600, replaced atomically under a
lock); the HTTP server only reads it, again whenever the file changes, so a revocation takes effect on the
next request. A token is ``kvg_<id>_<secret>``: the id (public, 12 hex digits) finds the record, the
secret (32 random bytes) is checked against a salted BLAKE2b hash. Only the hash is stored, and the secret
is printed once by ``token create``. A slow password hash is not needed: the secret is random, not chosen.

A token's ``repositories`` are exact repository names, or a prefix ending in ``*`` (``rust:*`` for every
derived Rust provider); none means every repository.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from snapshot_format.atomic import write_atomically
from snapshot_format.layout import StateLayout
from snapshot_format.names import RESERVED_PREFIX, repository_allowed, repository_name_problem
from snapshot_format.regular import IrregularFileError, open_regular, read_regular

TOKEN_STORE_VERSION = 1
TOKENS_FILENAME = "tokens.json"
SCOPES = ("read", "index")  # index includes read
TOKEN_PREFIX = "kvg_"
_TOKEN_RE = re.compile(r"^kvg_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
MAX_STORE_BYTES = 4 << 20


class TokenStoreError(Exception):
    """The token store cannot be read or changed; the message names the file."""


class TokenRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One token as stored: never the secret, only its salted hash."""

    name: str
    id: str  # 12 hex digits, the public part of the token
    salt: str  # 16 random bytes, hex
    hash: str  # BLAKE2b-256 of the secret keyed with the salt, hex
    scope: str  # "read" | "index"
    repositories: tuple[str, ...] = ()  # () = every repository
    created_at: str = ""  # ISO 8601 UTC

    def sees(self, repository: str) -> bool:
        """Whether this token may read ``repository``."""
        return not self.repositories or repository_allowed(self.repositories, repository)


class TokenStore(msgspec.Struct, frozen=True, kw_only=True):
    version: int = TOKEN_STORE_VERSION
    tokens: tuple[TokenRecord, ...] = ()


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(TokenStore)


def tokens_path(layout: StateLayout) -> Path:
    """Where the token store lives: beside the generations, in the state directory."""
    return layout.state_dir / TOKENS_FILENAME


def repository_pattern_problem(pattern: str) -> str:
    """Why ``pattern`` cannot limit a token, or "" when it can."""
    body = pattern[:-1] if pattern.endswith("*") else pattern
    if "*" in body:
        return f"repository {pattern!r}: '*' may only end a prefix"
    if pattern.endswith("*"):
        return "" if re.fullmatch(r"[A-Za-z0-9._+:-]*", body) else f"repository prefix {pattern!r} is invalid"
    if body.startswith(RESERVED_PREFIX):
        problem = repository_name_problem(body[len(RESERVED_PREFIX) :])
        return f"repository {pattern!r}: {problem}" if problem else ""
    return repository_name_problem(body)


def token_name_problem(name: str) -> str:
    """Why ``name`` cannot name a token, or ""."""
    if not _NAME_RE.match(name):
        return (
            f"token name {name!r} is invalid (a letter or digit, then up to 63 letters, digits, "
            "'.', '_', '@', '+', '-')"
        )
    return ""


def _digest(secret: str, salt: bytes) -> str:
    return hashlib.blake2b(secret.encode("ascii"), key=salt, digest_size=32).hexdigest()


def parse_token(presented: str) -> tuple[str, str] | None:
    """(id, secret) of a well-formed token, else None."""
    match = _TOKEN_RE.match(presented)
    return (match.group(1), match.group(2)) if match else None


def verify(record: TokenRecord, secret: str) -> bool:
    """Whether ``secret`` is the one ``record`` was created with (constant time)."""
    try:
        salt = bytes.fromhex(record.salt)
    except ValueError:
        return False
    return hmac.compare_digest(_digest(secret, salt), record.hash)


def read_store(path: Path) -> tuple[TokenRecord, ...]:
    """The stored tokens (none when the file is absent); TokenStoreError names the file otherwise."""
    try:
        data = read_regular(path, limit=MAX_STORE_BYTES)  # a FIFO in its place must not hang serve
    except FileNotFoundError:
        return ()
    except IrregularFileError as exc:
        raise TokenStoreError(f"{exc}; the token store must be a file written by `kivgraph token create`") from None
    except OSError as exc:
        raise TokenStoreError(f"{path}: cannot read the token store: {exc.strerror or exc}") from None
    if len(data) > MAX_STORE_BYTES:
        raise TokenStoreError(f"{path}: the token store is larger than {MAX_STORE_BYTES} bytes")
    try:
        store = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise TokenStoreError(f"{path}: malformed token store: {exc}") from None
    if store.version != TOKEN_STORE_VERSION:
        raise TokenStoreError(
            f"{path}: token store version {store.version}, this kivgraph reads version {TOKEN_STORE_VERSION}"
        )
    for record in store.tokens:
        if record.scope not in SCOPES:
            raise TokenStoreError(f"{path}: token {record.name!r} has an unknown scope {record.scope!r}")
    return store.tokens


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One writer at a time (two ``token create`` at once must not lose a token)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(path.name + ".lock")
    try:
        fd = open_regular(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except IrregularFileError as exc:
        raise TokenStoreError(f"{exc}; remove it (nothing holds it) and retry") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write(path: Path, tokens: tuple[TokenRecord, ...]) -> None:
    data = msgspec.json.format(_encoder.encode(TokenStore(tokens=tokens)), indent=2) + b"\n"
    write_atomically(path, data, mode=0o600)


def create_token(path: Path, name: str, scope: str, repositories: tuple[str, ...] = ()) -> tuple[TokenRecord, str]:
    """Store a new token and return its record and the token text (shown once, never stored)."""
    problem = token_name_problem(name)
    if problem:
        raise TokenStoreError(problem)
    if scope not in SCOPES:
        raise TokenStoreError(f"scope {scope!r} is not one of {', '.join(SCOPES)}")
    for pattern in repositories:
        problem = repository_pattern_problem(pattern)
        if problem:
            raise TokenStoreError(problem)
    with _locked(path):
        existing = read_store(path)
        if any(t.name == name for t in existing):
            raise TokenStoreError(f"{path}: a token named {name!r} exists; revoke it first or choose another name")
        token_id = secrets.token_hex(6)
        while any(t.id == token_id for t in existing):
            token_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        record = TokenRecord(
            name=name,
            id=token_id,
            salt=salt.hex(),
            hash=_digest(secret, salt),
            scope=scope,
            repositories=tuple(dict.fromkeys(repositories)),
            created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        _write(path, (*existing, record))
    return record, f"{TOKEN_PREFIX}{token_id}_{secret}"


def revoke_token(path: Path, name: str) -> TokenRecord:
    """Remove the token named ``name``; TokenStoreError when there is none."""
    with _locked(path):
        existing = read_store(path)
        found = [t for t in existing if t.name == name]
        if not found:
            raise TokenStoreError(f"{path}: no token named {name!r}")
        _write(path, tuple(t for t in existing if t.name != name))
    return found[0]


# --- the audit log (written by the HTTP server, read by ``kivgraph token list``) ------------------------------

AUDIT_FILENAME = "audit.jsonl"


class _AuditLine(msgspec.Struct):
    ts: str = ""
    token_id: str = ""


_audit_decoder = msgspec.json.Decoder(_AuditLine)


def audit_paths(layout: StateLayout) -> tuple[Path, Path]:
    """The audit log and its one rotation, oldest first."""
    current = layout.log_dir / AUDIT_FILENAME
    return current.with_name(AUDIT_FILENAME + ".1"), current


def last_uses(layout: StateLayout) -> dict[str, str]:
    """The newest audit-log time of each token id (its last recorded use); lines that do not parse are skipped."""
    found: dict[str, str] = {}
    for path in audit_paths(layout):
        try:
            lines = read_regular(path).splitlines()
        except OSError:  # absent, or not a regular file (a FIFO there would block): no uses recorded
            continue
        for line in lines:
            try:
                entry = _audit_decoder.decode(line)
            except msgspec.DecodeError:
                continue
            if entry.token_id and entry.ts > found.get(entry.token_id, ""):
                found[entry.token_id] = entry.ts
    return found
