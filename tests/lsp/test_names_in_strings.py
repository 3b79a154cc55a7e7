"""Names in strings (issue 24, item 4) through a real client (pytest-lsp), judged by Puppet itself.

A class and a defined type are used through every form that names them: strings and arrays given to
``include``/``contain``/``require``, the functions that take names (``create_resources``,
``ensure_resource``, ``ensure_resources``, ``defined``; with ``'class'`` their titles or hash keys are
classes), ``Class['x']`` and ``Resource['x', 't']`` in relationship chains and attribute values,
``Type['title']`` overrides and collectors.  Each is renamed through the server, the edit applied to disk
as an editor does, and ``puppet apply --noop`` must compile and apply the same resources under the new
name.  A name computed at run time (``include $x``, ``"${prefix}::x"``) cannot be edited: the rename
lists it in a ``window/showMessage`` warning instead of skipping it silently.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.test_index_ready import indexing_ended, start_cold
from tests.lsp.test_references import (
    CONFIG,
    apply_edit,
    locs,
    name_pattern,
    occurrences,
    open_doc,
    puppet_compile,
    references,
    rename,
    write_files,
)

pytestmark = pytest.mark.asyncio

STDLIB = "/usr/share/puppet/modules/stdlib"
FILES = {
    "environment.conf": "modulepath = modules\n",
    "manifests/site.pp": (
        "node default {\n"
        "  create_resources('class', { 'mymod::svc' => {} })\n"
        "  include 'mymod::svc'\n"
        "  include mymod::wrap\n"
        "  require mymod::svc\n"
        "  ensure_resource('class', 'mymod::svc')\n"
        "  ensure_resources('class', { 'mymod::svc' => {} })\n"
        "  create_resources('mymod::thing', { 'a' => { 'msg' => 'a' } })\n"
        "  ensure_resource('Mymod::Thing', 'b', { 'msg' => 'b' })\n"
        "  ensure_resources('mymod::thing', { 'c' => {} })\n"
        "  mymod::thing { 'd': }\n"
        "  Mymod::Thing['d'] { msg => 'overridden' }\n"
        "  Mymod::Thing <| title == 'c' |> { msg => 'collected' }\n"
        "  Class['mymod::svc'] -> Mymod::Thing['c'] -> Resource['mymod::thing', 'd']\n"
        "  notify { 'end': require => [Class['mymod::svc'], Resource['Mymod::Thing', 'a']] }\n"
        "  if defined('mymod::svc') and defined('mymod::thing') and defined(Class['mymod::svc']) {\n"
        "    notify { 'defined': }\n"
        "  }\n"
        "}\n"
    ),
    "modules/mymod/manifests/svc.pp": "class mymod::svc {\n  notify { 'svc': }\n}\n",
    "modules/mymod/manifests/wrap.pp": "class mymod::wrap {\n  contain ['mymod::svc']\n}\n",
    "modules/mymod/manifests/thing.pp": (
        "define mymod::thing (String $msg = 'thing') {\n  notify { \"thing ${title}\": message => $msg }\n}\n"
    ),
    # never declared: names computed at run time, which a rename must list
    "modules/mymod/manifests/dyn.pp": (
        "class mymod::dyn (String $n = 'mymod::svc') {\n"
        "  include $n\n"
        '  include "${module_name}::svc"\n'
        '  include "${module_name}::other"\n'
        "  create_resources($n, {})\n"
        "}\n"
    ),
}


@pytest.fixture
def env(tmp_path):
    if not os.path.isdir(STDLIB) or shutil.which("puppet") is None:
        pytest.skip("stdlib or puppet is not installed")
    env = os.path.join(str(tmp_path), "production")
    write_files(env, FILES)
    shutil.copytree(STDLIB, os.path.join(env, "modules", "stdlib"))
    return env


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, env):
    await start_cold(lsp_client, env)
    await indexing_ended(lsp_client)
    yield
    await lsp_client.shutdown_session()


def applied(env: str) -> list[str]:
    """What Puppet compiles and applies (noop) for the environment: its resources' lines, sorted."""
    out = puppet_compile(env)
    return sorted(x for x in out.splitlines() if x.startswith("Notice:") and " catalog " not in x)


def written(env: str, name: str) -> set:
    """Where ``name`` is written in the environment's own manifests (stdlib's are not the test's; dyn.pp's
    default value is a plain string)."""
    return {
        o
        for o in occurrences(env, "(?i)" + name_pattern(name))
        if not o[0].endswith(("dyn.pp",)) and "stdlib" not in o[0]
    }


@pytest.mark.parametrize(
    "old, new, target, shown",
    [
        (
            "mymod::svc",
            "mymod::service",
            "modules/mymod/manifests/service.pp",
            ("Mymod::Svc", "Mymod::Service"),
        ),
        ("mymod::thing", "mymod::item", "modules/mymod/manifests/item.pp", ("Mymod::Thing", "Mymod::Item")),
    ],
)
async def test_rename_through_every_form_keeps_the_catalog(
    client: LanguageClient, env, old, new, target, shown
):
    before = applied(env)
    assert any(shown[0] in line for line in before)
    site = os.path.join(env, "manifests/site.pp")
    # every form is a reference
    want = written(env, old)
    assert len(want) >= 9
    open_doc(client, site)
    assert locs(env, await references(client, site, old)) == want
    # from the string given to defined() (a class or a type: the one defined is renamed)
    edit = await rename(client, site, f"defined('{old}')", new, delta=len("defined('"))
    _edited, moved = apply_edit(edit)
    assert [os.path.relpath(n, env) for _o, n in moved] == [target]
    assert written(env, old) == set()
    after = applied(env)
    assert after == sorted(line.replace(shown[0], shown[1]) for line in before)


async def test_rename_lists_computed_names(client: LanguageClient, env):
    site = os.path.join(env, "manifests/site.pp")
    open_doc(client, site)
    await rename(client, site, "mymod::svc", "mymod::service")
    (shown,) = [m for m in client.messages if m.type == types.MessageType.Warning]
    dyn = os.path.join(env, "modules/mymod/manifests/dyn.pp")
    places = set(re.findall(re.escape(dyn) + r":(\d+):(\d+)", shown.message))
    # include $n, include "${module_name}::svc", create_resources($n, ...): not "${module_name}::other"
    assert places == {("2", "11"), ("3", "11"), ("5", "20")}, shown.message
