"""The signed manifest of the golden vectors (``vectors/MANIFEST.json``).

The manifest lists the BLAKE3 hash of every vector data file and is signed with the release key,
whose public half is ``vectors/release-key.did.txt``; the private seed lives outside the project
(``../shared/keys/`` or the file named by ``$MEMCONFORM_VECTORS_KEY``) and never enters it.

Format::

    {"format": "memconform-vectors-manifest/1",
     "files": {"<path under vectors/>": "blake3:<base32>", ...},   # sorted by path
     "signer": "<release did:key>",
     "signature": "ed25519:<base64>"}

``signature`` is Ed25519 over BLAKE3(JCS(manifest without ``signature``)); file hashes are
"blake3:" + lowercase unpadded base32 of BLAKE3 of the file's bytes.

Command line: ``python -m memconform.vectors.manifest verify`` or ``... sign [--key PATH]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import base58
import blake3
import rfc8785
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

__all__ = [
    "FORMAT",
    "ManifestReport",
    "SeedError",
    "load_seed",
    "release_did",
    "sign",
    "vector_files",
    "verify",
]

FORMAT = "memconform-vectors-manifest/1"
MANIFEST = "MANIFEST.json"
RELEASE_DID_FILE = "release-key.did.txt"
KEY_ENV = "MEMCONFORM_VECTORS_KEY"
PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_SEED_PATH = PACKAGE_DIR.parent.parent / "shared" / "keys" / "vectors-release.ed25519.seed.hex"


class SeedError(RuntimeError):
    """The release seed could not be found or read (the message never contains the seed)."""


@dataclass(frozen=True)
class ManifestReport:
    ok: bool
    problems: tuple[tuple[str, str], ...]  # (file, problem)

    def __str__(self) -> str:
        if self.ok:
            return "vectors manifest: OK"
        return "vectors manifest: FAILED\n" + "\n".join(f"  {f}: {p}" for f, p in self.problems)


# --------------------------------------------------------------------------- helpers

def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").rstrip("=").lower()


def file_hash(data: bytes) -> str:
    return "blake3:" + _b32(blake3.blake3(data).digest())


def _did(public_key: bytes) -> str:
    return "did:key:z" + base58.b58encode(b"\xed\x01" + public_key).decode("ascii")


def _public_key(did: str) -> bytes:
    if not did.startswith("did:key:z"):
        raise ValueError("not a base58btc did:key")
    raw = base58.b58decode(did[len("did:key:z") :])
    if len(raw) != 34 or raw[:2] != b"\xed\x01":
        raise ValueError("not an Ed25519 did:key")
    return raw[2:]


def _message(manifest: dict) -> bytes:
    body = {k: v for k, v in manifest.items() if k != "signature"}
    return blake3.blake3(rfc8785.dumps(body)).digest()


def release_did() -> str:
    """The release key's did:key, as shipped in the package (never taken from a copy being checked)."""
    return (PACKAGE_DIR / RELEASE_DID_FILE).read_text(encoding="utf-8").strip()


def vector_files(root: Path | str | None = None) -> list[str]:
    """Relative paths of every vector data file under ``root``: everything inside its spec folders
    (``ump/``, ...), skipping dotfiles and ``__pycache__``. Sorted, ``/``-separated."""
    root = Path(root) if root is not None else PACKAGE_DIR
    out = []
    for spec_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        for path in spec_dir.rglob("*"):
            rel = path.relative_to(root)
            if path.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                out.append(rel.as_posix())
    return sorted(out)


# --------------------------------------------------------------------------- verify

def verify(root: Path | str | None = None) -> ManifestReport:
    """Check ``root``/MANIFEST.json (default: the installed vectors) against the files beside it."""
    root = Path(root) if root is not None else PACKAGE_DIR
    problems: list[tuple[str, str]] = []
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ManifestReport(False, ((MANIFEST, "missing"),))
    except ValueError as exc:
        return ManifestReport(False, ((MANIFEST, f"not JSON: {exc}"),))
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        problems.append((MANIFEST, f"format is not {FORMAT!r}"))
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(listed, dict):
        problems.append((MANIFEST, "no files table"))
        listed = {}

    present = set(vector_files(root))
    for path in sorted(listed):
        target = root / path
        if not target.is_file():
            problems.append((path, "listed in the manifest but missing"))
            continue
        actual = file_hash(target.read_bytes())
        if actual != listed[path]:
            problems.append((path, f"changed: manifest says {listed[path]}, file hashes to {actual}"))
    for path in sorted(present - set(listed)):
        problems.append((path, "vector file present but not listed in the manifest"))

    expected_signer = release_did()
    signer = manifest.get("signer") if isinstance(manifest, dict) else None
    if signer != expected_signer:
        problems.append((MANIFEST, f"signer {signer!r} is not the release key {expected_signer}"))
    signature = manifest.get("signature") if isinstance(manifest, dict) else None
    if not isinstance(signature, str) or not signature.startswith("ed25519:"):
        problems.append((MANIFEST, "signature missing or not 'ed25519:<base64>'"))
    else:
        try:
            raw = base64.b64decode(signature[len("ed25519:") :], validate=True)
            VerifyKey(_public_key(expected_signer)).verify(_message(manifest), raw)
        except (ValueError, BadSignatureError):
            problems.append((MANIFEST, "signature does not verify with the release key"))
    return ManifestReport(not problems, tuple(problems))


# --------------------------------------------------------------------------- sign

def _write(seed: bytes, root: Path) -> None:
    key = SigningKey(seed)
    manifest: dict = {
        "format": FORMAT,
        "files": {p: file_hash((root / p).read_bytes()) for p in vector_files(root)},
        "signer": _did(bytes(key.verify_key)),
    }
    signature = key.sign(_message(manifest)).signature
    manifest["signature"] = "ed25519:" + base64.b64encode(signature).decode("ascii")
    (root / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def sign(seed: bytes, root: Path | str | None = None) -> None:
    """Rewrite ``root``/MANIFEST.json (default: this package) with fresh hashes and a signature.

    Refuses a seed whose did:key is not the release key's."""
    if not isinstance(seed, (bytes, bytearray)) or len(seed) != 32:
        raise SeedError("the release seed must be 32 bytes")
    did = _did(bytes(SigningKey(bytes(seed)).verify_key))
    if did != release_did():
        raise SeedError(f"this seed's key {did} is not the release key {release_did()}; refusing to sign")
    _write(bytes(seed), Path(root) if root is not None else PACKAGE_DIR)


def load_seed(path: Path | str | None = None) -> bytes:
    """Read the release seed (hex) from ``path``, else ``$MEMCONFORM_VECTORS_KEY``, else
    ``../shared/keys/vectors-release.ed25519.seed.hex`` beside the repository."""
    if path is None:
        env = os.environ.get(KEY_ENV)
        path = Path(env) if env else DEFAULT_SEED_PATH
    path = Path(path)
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        raise SeedError(
            f"release seed not found at {path}: set ${KEY_ENV} to the path of the hex seed file "
            "(only maintainers have it; verifying needs no seed)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SeedError(f"cannot read the release seed at {path}: {type(exc).__name__}") from None
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise SeedError(f"{path} does not hold a hex seed") from None
    if len(seed) != 32:
        raise SeedError(f"{path} holds {len(seed)} bytes, not a 32-byte Ed25519 seed")
    return seed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify or re-sign vectors/MANIFEST.json")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="check the manifest against the files and the release key")
    v.add_argument("--root", type=Path, default=None)
    s = sub.add_parser("sign", help="rewrite hashes and signature (needs the release seed)")
    s.add_argument("--root", type=Path, default=None)
    s.add_argument("--key", type=Path, default=None, help=f"hex seed file (default: ${KEY_ENV} or ../shared/keys)")
    args = parser.parse_args(argv)
    if args.command == "sign":
        try:
            sign(load_seed(args.key), args.root)
        except SeedError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"signed {MANIFEST} with {release_did()}")
    report = verify(args.root)
    print(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
