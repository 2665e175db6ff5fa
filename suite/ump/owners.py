"""Who the live UMP checks act as: the owners `owner-a` and `owner-b`, and how the suite proves it.

A server under test at L3 must know its owners' keys: it signs their records on write (§2.8) and
honours only tokens its owners signed (§5.2). By default the owners are the suite's deterministic
test keys (`testkeys`), which a server can load because their seeds are public. A vendor whose
server holds its own keys names them instead (docs/vendor-keys.md): per owner a DID and its
Ed25519 seed, or a DID and a command that mints a capability token for (owner, verbs, scope, ttl).
`mallory` is always the suite's own test key: the key no server's operator holds.

Capability tokens are the one format the suite must speak to test at all; §5.2 fixes their
contents, not their encoding. The suite writes the public reference implementation's umpcap
tokens, times as ISO-8601 strings by default (`times`), NumericDate when the vendor says so.

The checks call `did(name)` and sign with `signing_key(name)` without seeing the target, so the
owners of the target being judged are *active* (module state): every live UMP client carries its
`owners` and the check runner activates them before each check (`activate`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from nacl.signing import SigningKey

from memconform.suite.ump import captoken, testkeys
from memconform.suite.ump.did import DidError, did_key_from_public_key, public_key_from_did_key

#: The owners the live checks act as; mallory is never one a vendor supplies.
OWNER_NAMES = ("owner-a", "owner-b")
SUITE_ONLY = ("mallory",)
#: How long a command may take to mint one token.
COMMAND_TIMEOUT = 30.0


class OwnerError(ValueError):
    """Owners described wrongly (a seed that is not 32 bytes, a DID that is not its seed's)."""


class CannotSign(Exception):
    """The suite holds no key for this owner (the vendor gave a token command only)."""


@dataclass(frozen=True)
class Owner:
    name: str
    did: str
    #: the 32-byte Ed25519 seed, when the suite may sign as this owner
    seed: bytes | None = None
    #: argv of a command that prints a capability token for this owner (placeholders below); when
    #: given, the owner's tokens come from it even if a seed is known (the seed then signs records)
    token_command: tuple[str, ...] | None = None
    #: the folder `{here}` stands for in the command (the descriptor's)
    base_dir: str | None = None

    @property
    def signing_key(self) -> SigningKey | None:
        return SigningKey(self.seed) if self.seed is not None else None


def _seed_bytes(text: str, where: str) -> bytes:
    text = text.strip()
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        import base64

        try:
            raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_" if ("-" in text or "_" in text) else None,
                                   validate=True)
        except ValueError:
            raise OwnerError(f"{where}: the seed is neither hex nor base64") from None
    if len(raw) != 32:
        raise OwnerError(f"{where}: an Ed25519 seed has 32 bytes, not {len(raw)}")
    return raw


def owner_from(name: str, *, did: str | None = None, seed: str | bytes | None = None,
               seed_file: str | None = None, token_command: str | list[str] | None = None,
               where: str = "", base_dir: str | None = None) -> Owner:
    """One owner as a descriptor or a flag describes it; checks that the DID is the seed's."""
    where = where or name
    if seed_file is not None:
        try:
            seed = open(os.path.expanduser(seed_file), encoding="utf-8").read()
        except OSError as exc:
            raise OwnerError(f"{where}: cannot read seed_file {seed_file!r}: {exc}") from None
    raw = _seed_bytes(seed, where) if isinstance(seed, str) else seed
    if raw is not None and len(raw) != 32:
        raise OwnerError(f"{where}: an Ed25519 seed has 32 bytes, not {len(raw)}")
    derived = did_key_from_public_key(bytes(SigningKey(raw).verify_key)) if raw is not None else None
    if did is None:
        if derived is None:
            raise OwnerError(f"{where}: give a did (with a token command) or a seed")
        did = derived
    elif derived is not None and did != derived:
        raise OwnerError(f"{where}: the did {did} is not the did:key of the seed ({derived})")
    argv: tuple[str, ...] | None = None
    if token_command is not None:
        argv = tuple(shlex.split(token_command)) if isinstance(token_command, str) else tuple(token_command)
        if not argv:
            raise OwnerError(f"{where}: token_command is empty")
    if raw is None and argv is None:
        raise OwnerError(f"{where}: the suite needs the owner's seed or a token_command to act as {did}")
    return Owner(name=name, did=did, seed=raw, token_command=argv, base_dir=base_dir)


def _test_owner(name: str) -> Owner:
    return Owner(name=name, did=testkeys.test_did(name), seed=testkeys.test_seed(name))


@dataclass(frozen=True)
class Owners:
    """The owners of one target and the token time format it reads."""

    times: str = captoken.DEFAULT_TIMES
    owners: Mapping[str, Owner] = field(default_factory=lambda: {n: _test_owner(n) for n in OWNER_NAMES})

    def __post_init__(self) -> None:
        if self.times not in captoken.TIME_FORMATS:
            raise OwnerError(f"token times are one of {', '.join(captoken.TIME_FORMATS)}, not {self.times!r}")
        unknown = set(self.owners) - set(OWNER_NAMES)
        if unknown:
            raise OwnerError(f"owners are named {', '.join(OWNER_NAMES)}; not {', '.join(sorted(unknown))}")

    @property
    def vendor(self) -> bool:
        """Whether any owner is not the suite's test key."""
        return any(o.did != testkeys.test_did(n) for n, o in self.owners.items())

    def owner(self, name: str) -> Owner:
        if name in SUITE_ONLY:
            return _test_owner(name)
        if name not in self.owners:
            raise KeyError(f"no owner {name!r}; the live checks act as {', '.join(OWNER_NAMES)} (and mallory)")
        return self.owners[name]

    def did(self, name: str) -> str:
        return self.owner(name).did

    def name_of(self, did: str) -> str | None:
        for name in (*OWNER_NAMES, *SUITE_ONLY):
            if self.did(name) == did:
                return name
        return None

    def signing_key(self, name: str) -> SigningKey:
        """The key that signs as `name`; CannotSign when the vendor gave only a token command."""
        key = self.owner(name).signing_key
        if key is None:
            raise CannotSign(f"the suite holds no key for {name} ({self.did(name)}): the target's description gives "
                             "a token command but no seed, so records cannot be signed as that owner")
        return key

    def token(self, name: str, *, verbs: tuple[str, ...] | list[str] = captoken.VERBS,
              scope: Mapping[str, str] | None = None, ttl: float = 900.0, now: float | None = None,
              nbf: float | None = None, exp: float | None = None, **kw: Any) -> str:
        """A capability token of `name` (scope defaults to {owner: its DID}): minted with the
        owner's seed, or by the owner's token command when the suite holds no seed."""
        owner = self.owner(name)
        scope = dict(scope) if scope is not None else {"owner": owner.did}
        now = time.time() if now is None else now
        if owner.token_command is None:
            return captoken.mint(SigningKey(owner.seed), verbs=verbs, scope=scope, ttl=ttl, now=now, nbf=nbf,
                                 exp=exp, times=self.times, **kw)
        if kw:
            raise CannotSign(f"a token command cannot make a token with {', '.join(sorted(kw))}")
        return run_token_command(owner, verbs=list(verbs), scope=scope,
                                 exp=exp if exp is not None else now + ttl, nbf=nbf, now=now, times=self.times)

    def describe(self) -> dict[str, Any]:
        return {"token_times": self.times,
                "owners": {n: {"did": o.did, "signs": o.seed is not None,
                               **({"token_command": list(o.token_command)} if o.token_command else {})}
                           for n, o in self.owners.items()}}


def run_token_command(owner: Owner, *, verbs: list[str], scope: Mapping[str, str], exp: float,
                      nbf: float | None, now: float, times: str) -> str:
    """Run the owner's command; its first non-empty stdout line is the token.

    Placeholders in the argv (also passed as MEMCONFORM_TOKEN_* environment variables): {owner}
    (the DID), {name}, {verbs} (comma-separated), {scope} (JSON), {ttl} (whole seconds), {exp} and
    {nbf} (in the token time format; {nbf} empty when none), {times} (iso or numeric); in the argv
    only: {python} (this interpreter) and {here} (the descriptor's folder)."""
    values = {
        "owner": owner.did, "name": owner.name, "verbs": ",".join(verbs),
        "scope": json.dumps(dict(scope), sort_keys=True, separators=(",", ":")),
        "ttl": str(max(0, int(round(exp - now)))), "exp": str(captoken.format_time(exp, times)),
        "nbf": str(captoken.format_time(nbf, times)) if nbf is not None else "", "times": times,
    }
    import sys

    try:
        argv = [part.format(**values, python=sys.executable, here=owner.base_dir or os.getcwd())
                for part in owner.token_command or ()]
    except (KeyError, IndexError, ValueError) as exc:
        raise CannotSign(f"the token command {shlex.join(owner.token_command or ())} names an unknown "
                         f"placeholder: {exc}") from None
    env = {**os.environ, **{f"MEMCONFORM_TOKEN_{k.upper()}": v for k, v in values.items()}}
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CannotSign(f"the token command {shlex.join(argv)} did not run: {exc}") from None
    lines = [ln.strip() for ln in done.stdout.splitlines() if ln.strip()]
    if done.returncode != 0 or not lines:
        raise CannotSign(f"the token command {shlex.join(argv)} exited {done.returncode} "
                         f"{'without a token' if not lines else ''}: {done.stderr.strip()[-300:]}")
    return lines[0]


TEST_OWNERS = Owners()
_active: Owners = TEST_OWNERS


def activate(owners: Owners | None) -> None:
    """Make `owners` the ones `did`/`signing_key`/`token` answer for (None: the test keys)."""
    global _active
    _active = owners if owners is not None else TEST_OWNERS


def active() -> Owners:
    return _active


def did(name: str) -> str:
    return _active.did(name)


def signing_key(name: str) -> SigningKey:
    return _active.signing_key(name)


def is_did_key(did_text: str) -> bool:
    try:
        public_key_from_did_key(did_text)
    except DidError:
        return False
    return True


def owners_from_table(table: Mapping[str, Any] | None, *, times: str | None = None, base_dir: str | None = None,
                      where: str = "[ump]") -> Owners:
    """Owners as a descriptor's `[ump]` section gives them: `token_times`, and `[ump.owners.<name>]`
    tables (`did`, `seed` or `seed_file`, `token_command`) for owner-a and owner-b. An owner not
    named stays the suite's test key. Relative seed files and commands resolve from `base_dir`."""
    table = dict(table or {})
    times = times or table.get("token_times") or captoken.DEFAULT_TIMES
    if times not in captoken.TIME_FORMATS:
        raise OwnerError(f"{where}: token_times is one of {', '.join(captoken.TIME_FORMATS)}, not {times!r}")
    given = table.get("owners") or {}
    if not isinstance(given, Mapping):
        raise OwnerError(f"{where}: owners is a table of owner-a / owner-b tables")
    owners = {n: _test_owner(n) for n in OWNER_NAMES}
    for name, spec in given.items():
        here = f"{where} owners.{name}"
        if name not in OWNER_NAMES:
            raise OwnerError(f"{here}: the live checks act as {', '.join(OWNER_NAMES)} only")
        if not isinstance(spec, Mapping):
            raise OwnerError(f"{here}: expected a table (did, seed or seed_file, token_command)")
        unknown = set(spec) - {"did", "seed", "seed_file", "token_command"}
        if unknown:
            raise OwnerError(f"{here}: unknown key(s) {', '.join(sorted(unknown))}")
        seed_file = spec.get("seed_file")
        if isinstance(seed_file, str) and base_dir and not os.path.isabs(os.path.expanduser(seed_file)):
            seed_file = os.path.join(base_dir, seed_file)
        command = spec.get("token_command")
        if isinstance(command, str):
            command = shlex.split(command)
        if isinstance(command, list) and command and base_dir and command[0].startswith("./"):
            command = [os.path.join(base_dir, command[0][2:]), *command[1:]]
        owners[name] = owner_from(name, did=spec.get("did"), seed=spec.get("seed"), seed_file=seed_file,
                                  token_command=command, where=here, base_dir=base_dir)
    if owners["owner-a"].did == owners["owner-b"].did:
        raise OwnerError(f"{where}: owner-a and owner-b must be two owners, not both {owners['owner-a'].did}")
    return Owners(times=times, owners=owners)


#: Environment variables that stand for flags where no descriptor says it (docs/vendor-keys.md)
ENV_TIMES = "MEMCONFORM_UMP_TOKEN_TIMES"
ENV_OWNERS = "MEMCONFORM_UMP_OWNERS"


def from_environment() -> Owners:
    """The owners `MEMCONFORM_UMP_OWNERS` (a TOML file with an `[ump]` section, or the bare
    section) and `MEMCONFORM_UMP_TOKEN_TIMES` describe; the test keys, ISO times without them."""
    path = os.environ.get(ENV_OWNERS)
    times = os.environ.get(ENV_TIMES) or None
    if not path:
        return Owners(times=times) if times else TEST_OWNERS
    import tomllib

    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise OwnerError(f"{ENV_OWNERS}={path}: {exc}") from None
    return owners_from_table(doc.get("ump", doc), times=times, base_dir=os.path.dirname(os.path.abspath(path)),
                             where=path)
