"""Schemathesis hooks for the contract run (loaded through SCHEMATHESIS_HOOKS).

A batch body is valid only when it follows the interface's XSD, which no
generator derives from a `type: string` schema. So for the XML media types
this registers a strategy that draws valid batches (a new record with a drawn
name and UUIDs): schemathesis then checks that schema-valid batches are
accepted, and still sends its own broken bodies for the negative checks.
"""

import os
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
