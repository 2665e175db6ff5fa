"""Whether the suite's capability tokens get in at all, asked once per target and version before
any live UMP check (HTTP and MCP alike)."""

from __future__ import annotations

from typing import Any

from memconform.suite.ump.client import Auth


#: What the token probe recalls: nothing of it is ever stored.
TOKEN_PROBE_QUERY = "memconform capability token probe"


def refused_tokens(client: Any, owners: Any, where: str, how_sent: str = "POST /ump/recall") -> str | None:
    """Why the checks cannot act as the owners, or None. Every live check acts as owner-a or owner-b with
    a capability token the suite mints (or a token command gives, docs/vendor-keys.md), and §5.2 gives
    tokens no encoding: a server that answers an owner's recall in its own scope `unauthorized` reads
    another encoding (or refuses every token), and each check would only see that refusal. That is a
    target error saying so, never a verdict on the checks that could not get in (a blind red team,
    round 20: a server verifying another signing input lost L0 on every record rule)."""
    for name in ("owner-a", "owner-b"):
        try:
            did = owners.did(name)
            reply = client.recall({"query": TOKEN_PROBE_QUERY, "scope": {"owner": did}, "limit": 1},
                                  auth=Auth.as_owner(name))
        except (KeyError, ValueError):
            return None  # no such owner to act as: the checks say so themselves
        if reply.error_code == "unauthorized":
            how = (f"the token {name}'s token command gave" if owners.owner(name).token_command else
                   f"the capability token memconform minted for {name} ({did}), `umpcap.<base64url(JCS claims)>."
                   f"ed25519:<signature over the BLAKE3 digest of the base64url claims text>` with times as "
                   f"{owners.describe().get('token_times', 'iso')}")
            return (f"{where} refused {how}: a recall of {name}'s own scope ({how_sent}) was "
                    f"answered {reply.describe()}. §5.2 gives "
                    "capability tokens no encoding, so every check acting as an owner would only meet this refusal: "
                    "no verdict. If your server reads another encoding or signing input, give the suite a "
                    "token_command (or token_times = \"numeric\") in a descriptor's [ump.owners] "
                    "(docs/vendor-keys.md)")
    return None
