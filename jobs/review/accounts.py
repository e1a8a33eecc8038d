"""Review accounts: who may sign in to `tribunal review`, with which role, kept in a users file.

Why a file of our own and not the run folder: a run folder may be shared with a vendor (a system's
maker gets its rows), and a users file holds password hashes; its path is configuration
(`--users FILE` or ``TRIBUNAL_REVIEW_USERS``), it is refused inside the run folder, and it is
written with mode 0600 (atomically: a temporary file in the same folder, then a rename).

Passwords are hashed with Argon2id (`argon2-cffi`, its recommended parameters), never stored;
verifying re-hashes when the library's parameters changed. An account signed in through OpenID
Connect has no password: it is matched by its e-mail (or subject), and its role is the one the
users file gives it (an unknown account signs in as nobody).

Roles, each including the one before it:

* **reviewer** — decides the items assigned to them; sees their own assignments and progress;
* **lead** — starts campaigns, sees everyone's assignments, decisions and agreement, resolves
  disagreements;
* **admin** — manages accounts (`tribunal review-users`), and everything a lead can do.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import tempfile
from pathlib import Path
from typing import Literal

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalcore.errors import ConfigError, InputError

Role = Literal["reviewer", "lead", "admin"]
ROLES: tuple[Role, ...] = ("reviewer", "lead", "admin")
USERS_ENV = "TRIBUNAL_REVIEW_USERS"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}")
"""An account name: letters, digits and ``._@+-`` (an e-mail address fits), at most 128 characters."""
MIN_PASSWORD = 12
"""The shortest password `add` accepts (NIST SP 800-63B asks for at least 8; reviewers move a leaderboard)."""

_HASHER = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the account does not exist, so a wrong name costs what a wrong password does.

    Made at the first sign-in, not at import: every `tribunal` command imports this module (the
    command line names `USERS_ENV`), and one Argon2id hash is 0.1-0.8 CPU-s a sweep paid before
    its first judge call (`benchmarks/sweep_start.py`)."""
    return _HASHER.hash("tribunal: a password nobody has")


class Account(BaseModel):
    """One account of the users file (the hash, never the password)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=f"^{NAME.pattern}$")
    role: Role
    password_hash: str | None = Field(default=None, description="Argon2id hash; None: signs in only by OpenID Connect.")
    email: str | None = Field(default=None, description="Matched against the OpenID Connect e-mail claim.")
    disabled: bool = False
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))

    def can(self, role: Role) -> bool:
        """Whether this account has `role` or a role above it."""
        return ROLES.index(self.role) >= ROLES.index(role)


class UsersFile(BaseModel):
    """The users file: every account by name."""

    model_config = ConfigDict(extra="forbid")

    accounts: list[Account] = Field(default_factory=list)

    def get(self, name: str) -> Account | None:
        return next((a for a in self.accounts if a.name == name), None)

    def by_email(self, email: str) -> Account | None:
        low = email.lower()
        return next((a for a in self.accounts if (a.email or "").lower() == low or a.name.lower() == low), None)


def users_path(given: str | None) -> Path:
    """The users file's path: `given`, else ``TRIBUNAL_REVIEW_USERS``, else ~/.config/tribunal/review-users.json."""
    if given:
        return Path(given).expanduser()
    env = os.environ.get(USERS_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".config" / "tribunal" / "review-users.json"


def refuse_inside_run(users: Path, run_uri: str) -> None:
    """A users file inside the run folder would travel with it to whoever the run is shared with."""
    if "://" in run_uri:
        return
    run = Path(run_uri).expanduser().resolve()
    if users.resolve().is_relative_to(run):
        raise ConfigError(f"{users}: the users file is inside the run folder {run}, which may be shared with a "
                          "system's maker; keep it elsewhere (--users FILE or TRIBUNAL_REVIEW_USERS)")


def load(path: Path) -> UsersFile:
    """The users file at `path`; a missing file is an empty one. A damaged file or one others can read is refused."""
    if not path.exists():
        return UsersFile()
    if path.is_dir():
        raise InputError(str(path), "is a folder, not a users file")
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise InputError(str(path), f"mode {mode:o}: others can read the password hashes; chmod 600 it")
    try:
        return UsersFile.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as exc:
        raise InputError(str(path), f"not a users file ({str(exc).splitlines()[0]})") from exc


def save(path: Path, users: UsersFile) -> None:
    """Write the users file atomically with mode 0600 (its folder made 0700 when new)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".users-", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(users.model_dump_json(indent=1).encode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def add(path: Path, name: str, role: Role, password: str | None, email: str | None = None) -> Account:
    """Add an account (or re-enable and reset a disabled one's role and password)."""
    if not NAME.fullmatch(name):
        raise InputError(str(path), f"account name {name!r}: use letters, digits and ._@+- (at most 128)")
    if password is not None and len(password) < MIN_PASSWORD:
        raise InputError(str(path), f"the password of {name} has {len(password)} characters; at least {MIN_PASSWORD}")
    if password is None and email is None:
        raise InputError(str(path), f"{name}: give a password, or an e-mail to sign in by OpenID Connect")
    users = load(path)
    old = users.get(name)
    if old is not None and not old.disabled:
        raise InputError(str(path), f"account {name} exists (disable it first to replace it)")
    account = Account(name=name, role=role, email=email,
                      password_hash=_HASHER.hash(password) if password is not None else None)
    users.accounts = [a for a in users.accounts if a.name != name] + [account]
    save(path, users)
    return account


def disable(path: Path, name: str) -> Account:
    """Disable an account: it cannot sign in, and its open sessions end at their next request."""
    users = load(path)
    account = users.get(name)
    if account is None:
        raise InputError(str(path), f"no account {name}")
    new = account.model_copy(update={"disabled": True})
    users.accounts = [new if a.name == name else a for a in users.accounts]
    save(path, users)
    return new


def verify(users: UsersFile, name: str, password: str) -> Account | None:
    """The account when `password` is its password and it is enabled; None otherwise (same cost either way)."""
    account = users.get(name)
    stored = account.password_hash if account is not None and account.password_hash else _dummy_hash()
    try:
        _HASHER.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    if account is None or account.disabled or not account.password_hash:
        return None
    return account
