"""Every request gets an answer (issue 26 item 10): positions outside LSP's uinteger range (-1, 2**31) and
other ill-typed params, through the raw stdio protocol.

The LSP specification types ``Position.line``/``character`` as uinteger (0 to 2**31 - 1); a request that
breaks its method's types is answered with JSON-RPC's InvalidParams (-32602), as a conforming server does.
Before, such a request was dropped and the client waited for ever.  The server answers the next request as
usual.
"""

from __future__ import annotations

import pytest

from tests.lsp.test_hostile_clients import raw  # noqa: F401 (fixture)

INVALID_PARAMS = -32602
URI = "file:///srv/invalid/params.pp"
TEXT = "class foo($x = 1) {\n  notice($x)\n}\ninclude foo\n"
METHODS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/signatureHelp",
    "textDocument/documentHighlight",
    "textDocument/prepareRename",
]


def _params(method, position):
    params = {"textDocument": {"uri": URI}, "position": position}
    if method == "textDocument/references":
        params["context"] = {"includeDeclaration": True}
    return params


def _assert_answered(client, i, method):
    r = client.response(i, timeout=30)
    assert r is not None, f"{method}: no answer"
    assert r["error"]["code"] == INVALID_PARAMS, r
    assert method in r["error"]["message"]


def _assert_alive(client):
    """The next valid request is answered as usual (the hover of `notice`)."""
    i = client.request("textDocument/hover", _params("textDocument/hover", {"line": 1, "character": 3}))
    r = client.response(i, timeout=30)
    assert r is not None and "notice" in r["result"]["contents"]["value"]


@pytest.mark.timeout(300)
def test_positions_outside_uinteger_are_answered(raw):  # noqa: F811
    c = raw()
    c.initialize()
    c.open(URI, TEXT)
    asked = []
    for method in METHODS:
        for value in (-1, 2**31):
            for field in ("line", "character"):
                position = {"line": 1, "character": 3, field: value}
                asked.append((c.request(method, _params(method, position)), method))
    for i, method in asked:
        _assert_answered(c, i, method)
    _assert_alive(c)


ILL_TYPED = {
    "object line": {"textDocument": {"uri": URI}, "position": {"line": {"n": 1}, "character": 3}},
    "null character": {"textDocument": {"uri": URI}, "position": {"line": 1, "character": None}},
    "list character": {"textDocument": {"uri": URI}, "position": {"line": 1, "character": [3]}},
    "no position": {"textDocument": {"uri": URI}},
    "textDocument not an object": {"textDocument": 5, "position": {"line": 1, "character": 3}},
    "params an array": [1, 2],
    "no params": None,
}


@pytest.mark.timeout(300)
def test_ill_typed_params_are_answered(raw):  # noqa: F811
    c = raw()
    c.initialize()
    c.open(URI, TEXT)
    asked = [(c.request(method, params), method) for method in METHODS for params in ILL_TYPED.values()]
    for i, method in asked:
        _assert_answered(c, i, method)
    _assert_alive(c)


def test_the_last_valid_position_is_answered(raw):  # noqa: F811
    """2**31 - 1 is a uinteger: a position past the end of the document, answered (null)."""
    c = raw()
    c.initialize()
    c.open(URI, TEXT)
    for method in ("textDocument/hover", "textDocument/definition", "textDocument/documentHighlight"):
        i = c.request(method, _params(method, {"line": 2**31 - 1, "character": 2**31 - 1}))
        r = c.response(i, timeout=30)
        assert r is not None and r.get("result") is None and "error" not in r, r
