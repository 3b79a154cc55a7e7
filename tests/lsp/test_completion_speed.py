"""Completion in a big manifest while typing (issue 31 item 3), through a real LSP client (pytest-lsp):
a completion request sent right after a keystroke is answered from the client's current text before
that keystroke's analysis is published (it never waits for a whole-file analysis), and its items are
right while the body being typed is broken; a context that needs the tree (the variables in scope)
is still answered from the analysis.

Before d548fc7 a completion waited for the analysis of the keystrokes before it (in a 300 KB class:
as long as a full parse when the keystroke broke the body), so the keystroke's diagnostics were
published first."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.publishes import mark, open_file, published, send_edit, wait_publish, workspace_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = workspace_client("completionws", "_completion_root")

BLOCK = (
    "  file {{ '/srv/app/conf{k}':\n"
    "    ensure  => file,\n"
    '    content => "x=${{base}}{k}\\n",\n'
    "  }}\n"
    "  exec {{ 'reload{k}':\n"
    "    command     => '/bin/true',\n"
    "    refreshonly => true,\n"
    "  }}\n"
)


def big_class(blocks: int) -> tuple[str, int]:
    """A one-class manifest of ``blocks`` blocks (~180 bytes each) and the line in the middle of its body where a block starts."""
    head = "class app (String $base = '/srv') {\n"
    body = [BLOCK.format(k=k) for k in range(blocks)]
    return head + "".join(body) + "}\n", 1 + 8 * (blocks // 2)


def _complete(client: LanguageClient, uri: str, line: int, character: int) -> object:
    position = types.Position(line=line, character=character)
    return client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )


def _labels(answer: object) -> set[str]:
    items = answer.items if isinstance(answer, types.CompletionList) else answer or []
    return {it.label for it in items}


@pytest.mark.parametrize("blocks", [1700, 12000])
async def test_completion_answers_before_the_keystrokes_analysis(client: LanguageClient, blocks: int) -> None:
    """300 KB: the items while the body is broken; 2.2 MB (each analysis a full parse of seconds,
    grammar.incremental.compact.HUGE_BYTES): also the order, the completion first."""
    root = client._completion_root  # type: ignore[attr-defined]
    text, mid = big_class(blocks)
    at = mark(client)
    uri = open_file(
        client, root, f"app/manifests/b{blocks}.pp", text.replace("class app ", f"class app::b{blocks} ")
    )
    first = await wait_publish(client, uri, 1, after=at, timeout=120)
    assert not first.diagnostics, first.diagnostics[:3]
    await _complete(client, uri, mid, 2)  # (a first one, from the analysis: the document's definitions)
    version = 1
    # a resource typed mid-body: the body is broken until it is complete
    typed = "  service { 'app':\n    ens"
    for k in range(3):
        at = mark(client)
        version += 1
        if k == 0:
            send_edit(client, uri, version, (mid, 0), (mid, 0), typed + "\n")
        elif k == 1:  # one more character typed ...
            send_edit(client, uri, version, (mid + 1, 7), (mid + 1, 7), "u")
        else:  # ... and deleted again
            send_edit(client, uri, version, (mid + 1, 7), (mid + 1, 8), "")
        col = 8 if k == 1 else 7
        answer = await _complete(client, uri, mid + 1, col)
        before = [p for p in published(client)[at:] if p.uri == uri and p.version == version]
        assert blocks < 12000 or not before, (
            f"keystroke {k}: the diagnostics of version {version} came before the completion"
        )
        labels = _labels(answer)
        assert {"ensure", "enable", "hasrestart", "require", "notify"} <= labels, sorted(labels)[:20]
        assert "content" not in labels and "refreshonly" not in labels  # (a service's, not a file's)
        items = answer.items if isinstance(answer, types.CompletionList) else answer
        ensure = next(it for it in items if it.label == "ensure")
        assert ensure.text_edit is not None
        assert ensure.text_edit.range.start == types.Position(line=mid + 1, character=4)
        found = await wait_publish(client, uri, version, after=at, timeout=120)
        assert any(d.severity == types.DiagnosticSeverity.Error for d in found.diagnostics), (
            "the typed resource should break the body"
        )


async def test_variables_still_come_from_the_tree(client: LanguageClient) -> None:
    root = client._completion_root  # type: ignore[attr-defined]
    text, mid = big_class(200)
    at = mark(client)
    uri = open_file(client, root, "app/manifests/small.pp", text.replace("class app ", "class app::small "))
    await wait_publish(client, uri, 1, after=at, timeout=120)
    await _complete(client, uri, mid, 2)
    at = mark(client)
    send_edit(client, uri, 2, (mid, 0), (mid, 0), "  notify { 'n': message => $b }\n")
    answer = await _complete(client, uri, mid, 29)
    labels = _labels(answer)
    assert "$base" in labels, sorted(labels)[:20]
    # a name: the document's own class among them, from the text alone
    send_edit(client, uri, 3, (mid, 0), (mid + 1, 0), "  include app::sm\n")
    labels = _labels(await _complete(client, uri, mid, 18))
    assert "app::small" in labels, sorted(labels)[:20]
