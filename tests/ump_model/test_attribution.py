"""Which open subscription could rightly be told of a record: the rule that lets a check judge a
leak on a session whose events name no subscription (suite/ump/attribution.py)."""

from __future__ import annotations

import pytest

from memconform.suite.ump import attribution, captoken, owners
from memconform.suite.ump.attribution import Written
from memconform.suite.ump.client import Auth, OpenSubscription

A, B = owners.did("owner-a"), owners.did("owner-b")
P = "github.com/example/p"


def sub(scope=None, auth=Auth.as_owner("owner-a")):
    return OpenSubscription("sub_1", {"scope": scope} if scope is not None else {"max_events": 1}, auth)


def scoped_token(**scope):
    return Auth.bearer(captoken.mint(owners.signing_key("owner-a"), scope={"owner": A, **scope}))


@pytest.mark.parametrize(("subscription", "rec", "could"), [
    # the owner's own subscription, naming no scope: every record of the owner, private ones too
    (sub(), Written("x", A, P, "private"), True),
    # ... but not another owner's private record
    (sub(), Written("x", B, P, "private"), False),
    # anyone may be told of a record no one is kept from
    (sub(auth=Auth.anonymous()), Written("x", B, P, "public"), True),
    (sub(auth=Auth.anonymous()), Written("x", A, P, "private"), False),
    (sub(auth=Auth.as_owner("owner-b")), Written("x", A, P, "shared"), True),
    # the scope it asked for: owner and project
    (sub({"owner": A, "project": P}), Written("x", A, "github.com/example/q", "private"), False),
    (sub({"owner": B}), Written("x", A, P, "public"), False),
    (sub({"owner": A, "project": P}), Written("x", A, P, "private"), True),
    # a project read as a path prefix is counted (the attribution errs towards "could")
    (sub({"owner": A, "project": P}), Written("x", A, P + "/child", "private"), True),
    (sub({"owner": A, "project": P}), Written("x", A, P + "-other", "private"), False),
    # a token's own scope narrows what its subscription may read
    (sub({"owner": A}, scoped_token(project=P)), Written("x", A, "github.com/example/q", "private"), False),
    (sub({"owner": A}, scoped_token(project=P)), Written("x", A, P, "private"), True),
    # a token that cannot be read is taken to grant everything
    (sub({"owner": A}, Auth.bearer("not a token")), Written("x", A, P, "private"), True),
])
def test_who_could_rightly_be_told(subscription, rec, could):
    assert attribution.may_be_told(subscription, rec) is could
    assert attribution.rightful((subscription,), rec) == ([subscription] if could else [])


def test_a_description_names_what_the_subscription_asked_and_as_whom():
    text = attribution.describe(sub({"owner": A, "project": P}))
    assert "sub_1" in text and P in text and "owner-a" in text
    assert "no token" in attribution.describe(sub(auth=Auth.anonymous()))
