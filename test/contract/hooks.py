"""Schemathesis hooks for the contract run (loaded through SCHEMATHESIS_HOOKS).

A batch body is valid only when it follows the interface's XSD, which no
generator derives from a `type: string` schema. So for the XML media types
this registers a strategy that draws valid batches (a new record with a drawn
name and UUIDs): schemathesis then checks that schema-valid batches are
accepted, and still sends its own broken bodies for the negative checks.

Identifiers of stored things (entities, revisions, batches, exports,
transactions) drawn at random name nothing, so every lookup would answer 404
and its checks would never reach the code behind it. test/contract/seed.ts
stores a few and passes their identifiers in CONTRACT_SEEDS; half of the
time a drawn identifier is replaced by one of them. Only a drawn value that
is itself valid (a UUID where the seeds are UUIDs) is replaced: an invalid
one may be what makes a negative case negative.
"""

import json
import os
import re
import uuid

import schemathesis
from hypothesis import strategies as st

VERSION = os.environ.get("CONTRACT_API_VERSION", "v2")

NAMES = st.text(alphabet=st.characters(categories=["Lu", "Ll"], max_codepoint=0x17F), min_size=1, max_size=40)
UUIDS = st.integers(min_value=0, max_value=2**128 - 1).map(lambda n: str(uuid.UUID(int=n, version=4)))


@st.composite
def batch(draw):
    name, batch_id, part_id = draw(NAMES), draw(UUIDS), draw(UUIDS)
    if VERSION == "v1":
        body = (
            '<bu xmlns="http://cam.tacr.cz/2019">'
            f'<inf bid="{batch_id}"><usr>Contract Test</usr></inf>'
            f'<ce lid="e1" et="PERSON"><prts><p pid="{part_id}" t="PT_NAME"><itms><si t="NM_MAIN">{name}</si></itms></p></prts></ce>'
            "</bu>"
        )
    else:
        body = (
            '<batchUpdate xmlns="http://cam.tacr.cz/2025">'
            f'<info uuid="{batch_id}"><sender><id>contract</id><name>Contract Test</name></sender></info>'
            f'<createEntity localId="e1" entityType="PERSON"><parts><part partUuid="{part_id}" type="PT_NAME">'
            f'<items><string type="NM_MAIN">{name}</string></items></part></parts></createEntity>'
            "</batchUpdate>"
        )
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body).encode("utf-8")


schemathesis.openapi.media_type("application/xml", batch(), aliases=["text/xml"])


SEEDS = json.loads(os.environ.get("CONTRACT_SEEDS", "{}"))
UUID_TEXT = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _is_uuid(value):
    return isinstance(value, str) and UUID_TEXT.match(value) is not None


def _replaceable(original, seeds):
    """Whether a drawn value is as valid as the seeds are, so replacing it cannot make a negative case positive."""
    if all(_is_uuid(seed) for seed in seeds):
        return _is_uuid(original)
    return isinstance(original, str)


# A range of two seeded transactions in commit order (the seeds are): drawn
# apart, the two would name a range only a quarter of the time, and a
# reversed one half of that.
RANGE = ("fromTransId", "toTransId")


def _ordered_range(transactions):
    return st.tuples(st.integers(0, len(transactions) - 1), st.integers(0, len(transactions) - 1)).map(
        lambda ends: dict(zip(RANGE, (transactions[min(ends)], transactions[max(ends)])))
    )


def _with_seeds(values):
    if not isinstance(values, dict):
        return st.just(values)
    names = [name for name, value in values.items() if name in SEEDS and _replaceable(value, SEEDS[name])]
    if not names:
        return st.just(values)
    if all(name in names for name in RANGE):
        return st.one_of(st.just(values), _ordered_range(SEEDS[RANGE[0]]).map(lambda drawn: {**values, **drawn}))
    choices = {name: st.one_of(st.just(values[name]), st.sampled_from(SEEDS[name])) for name in names}
    return st.fixed_dictionaries(choices).map(lambda drawn: {**values, **drawn})


@schemathesis.hook
def flatmap_path_parameters(context, path_parameters):
    return _with_seeds(path_parameters)


@schemathesis.hook
def flatmap_query(context, query):
    return _with_seeds(query)
