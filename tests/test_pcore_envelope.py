"""The PRFC-23 envelope (xpp.envelope): the table of headers it accepts and rejects, and the header it writes.

Apart because it is the document framing, independent of the Pcore payload it carries.
"""

from __future__ import annotations

import pytest

from puppet_xpp.xpp import envelope, pcore, result
from puppet_xpp.xpp.pcore import XppFormatError
from tests.pcore_helpers import build_assign

# ------------------------------------------------------------------------------------------------------
# envelope

PAYLOAD = pcore.dumps(build_assign()[1])
ACCEPT = [
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack;document-type=xpp;version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\r\n\r\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\r\n",
    b"application/vnd.puppet.pcore+msgpack\n; document-type=xpp\n; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack\r\n; document-type=xpp\r\n; version=1\r\n\r\n",
    b"application/vnd.puppet.pcore+msgpack ;\tversion = 1 ; document-type= xpp \n\n",
    b"application/vnd.puppet.pcore+msgpack; charset=utf-8; document-type=xpp; x-custom_1=a-b; version=1\n\n",
]
REJECT = [
    b"",
    PAYLOAD,
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1",
    b"application/vnd.puppet.pcore+yaml; document-type=xpp; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpackx; document-type=xpp; version=1\n\n",
    b"application/json; document-type=xpp; version=1\n\n",
    b"application/vnd.puppet.pcore; document-type=xpp; version=1\n\n",
    b"Application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n",
    b" application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n",
    b"# application/vnd.puppet.pcore+msgpack\n; document-type=xpp\n; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=pp; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=2\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1; version=1\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1;\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1 x\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=\n\n",
    b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1.0\n\n",
    b'application/vnd.puppet.pcore+msgpack; document-type="xpp"; version=1\n\n',
    b"application/vnd.puppet.pcore+msgpack, document-type=xpp, version=1\n\n",
    b"application/vnd.puppet.pcore+json; document-type=xpp; version=1\n\n",  # header ok, payload is msgpack
]


@pytest.mark.parametrize("head", ACCEPT)
def test_envelope_accepts(head):
    assert envelope.unwrap(head + PAYLOAD)[0] == "msgpack"
    assert result.read_xpp(head + PAYLOAD) == (build_assign()[1], [])


@pytest.mark.parametrize("head", REJECT)
def test_envelope_rejects(head):
    with pytest.raises(XppFormatError):
        result.read_xpp(head + PAYLOAD if head not in (b"", PAYLOAD) else head)


def test_envelope_writer():
    assert (
        envelope.header("msgpack")
        == b"application/vnd.puppet.pcore+msgpack; document-type=xpp; version=1\n\n"
    )
    assert envelope.header("json") == b"application/vnd.puppet.pcore+json; document-type=xpp; version=1\n\n"
    assert envelope.unwrap(envelope.wrap(b"[]", "json")) == (
        "json",
        {"document-type": "xpp", "version": "1"},
        b"[]",
    )
    assert envelope.looks_like_xpp(envelope.header()) and not envelope.looks_like_xpp(b"class a {}")
