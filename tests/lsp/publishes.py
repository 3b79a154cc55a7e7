"""Race-free waiting for publishDiagnostics in pytest-lsp tests.

`LanguageClient.wait_for_notification` only sees notifications that arrive after it is called, and
two publishes read from the server in one chunk resolve at most one waiter: the other is lost and the
test would wait forever.  Here every publish is recorded as it arrives, and waiting scans the record.
"""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types as L


def published(client) -> list:
    """All publishDiagnostics params received so far (recording starts on the first call)."""
    rec = getattr(client, "_puppet_xpp_published", None)
    if rec is None:
        rec = client._puppet_xpp_published = []
        features = client.protocol.fm.features
        default = features[L.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]  # pytest-lsp's (records client.diagnostics)

        def on_publish(params, *args):
            rec.append(params)
            return default(params, *args)

        features[L.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    return rec


def mark(client) -> int:
    """Where to start looking for a publish caused by what the test does next."""
    return len(published(client))


async def wait_publish(client, uri, version=None, after=0, timeout=60.0) -> L.PublishDiagnosticsParams:
    """The first publish for uri (and version, if given) recorded at index >= after."""
    rec = published(client)
    deadline = time.monotonic() + timeout
    i = after
    while True:
        while i < len(rec):
            p = rec[i]
            i += 1
            if p.uri == uri and (version is None or p.version == version):
                return p
        if time.monotonic() > deadline:
            raise AssertionError(f"no diagnostics published for {uri} version {version} in {timeout} s")
        await asyncio.sleep(0.005)
