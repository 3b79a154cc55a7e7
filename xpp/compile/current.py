"""Is an ``.xpp`` current?  The one rule, shared by ``--compile`` and the runtime (:mod:`xpp.runtime`).

An ``.xpp`` is current for a source when its envelope (:mod:`xpp.envelope`, parameters written by
:func:`xpp.result.write_xpp`) records

* the SHA-256 of exactly this source's bytes (``source-sha256``), and
* the settings asked for (language level, ``strict``, tasks mode) -- a setting the file does not record,
  or one not asked for (None), is not compared.

Only the envelope is read: the payload (the whole AST) is not decoded to answer the question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from puppet_xpp.xpp.result import SOURCE_PARAM, settings_params, source_digest

__all__ = ["Currency", "currency", "is_current"]


@dataclass(frozen=True)
class Currency:
    """What the envelope of an ``.xpp`` says about a source and the settings asked for."""

    digest: str  # "same" | "differs" | "missing" (the file records no source digest)
    other_settings: tuple[str, ...] = ()  # settings keys whose recorded value differs from the one asked

    @property
    def current(self) -> bool:
        return self.digest == "same" and not self.other_settings


def currency(params: Mapping[str, str], source: str | bytes, settings: Mapping[str, Any]) -> Currency:
    """Compare the envelope ``params`` of an ``.xpp`` (``xpp.envelope.unwrap``) with ``source`` (its text
    as the parser read it, or its bytes) and the ``settings`` asked for (keys of
    :func:`xpp.result.settings_params`; a None value: any recorded value is accepted)."""
    recorded = params.get(SOURCE_PARAM)
    if recorded is None:
        digest = "missing"
    else:
        digest = "same" if recorded == source_digest(source) else "differs"
    other: list[str] = []
    for key, value in settings.items():
        if value is None:
            continue
        for name, wanted in settings_params({key: value}).items():
            got = params.get(name)
            if got is not None and got != wanted:
                other.append(key)
    return Currency(digest, tuple(other))


def is_current(params: Mapping[str, str], source: str | bytes, settings: Mapping[str, Any]) -> bool:
    """The ``.xpp`` with envelope ``params`` was made from ``source`` under ``settings``."""
    return currency(params, source, settings).current
