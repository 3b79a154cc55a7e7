"""Rename end to end (pytest-lsp, VS Code's capabilities), each test on its own fresh environment and
server: the edit is applied to disk as an editor does, then Puppet compiles the catalog
(``puppet apply --noop --strict_variables``: every include, type, function, qualified variable and
Hiera key resolves) and our validator (module-location rules equal to Puppet's) finds no location error.
"""

from __future__ import annotations

import os

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.lsp.test_references import (
    CONFIG,
    FILES,
    apply_edit,
    build_workspace,
    close_doc,
    location_errors,
    locs,
    name_pattern,
    occurrences,
    open_doc,
    puppet_compile,
    references,
    rename,
    start,
    tell_server,
    until,
    write_files,
)

pytestmark = pytest.mark.asyncio


@pytest.fixture
def fresh_env(tmp_path, request):
    """The test environment, with the files a test's ``fresh_env`` parameter adds or replaces."""
    env = build_workspace(tmp_path)
    write_files(env, getattr(request, "param", {}))
    return env


@pytest_lsp.fixture(config=CONFIG)
async def fresh(lsp_client: LanguageClient, fresh_env):
    await start(lsp_client, fresh_env)
    yield
    await lsp_client.shutdown_session()


async def test_rename_class_moves_file_and_module_still_compiles(fresh: LanguageClient, fresh_env):
    env = fresh_env
    assert "port=8080 user=deploy" in puppet_compile(env)
    assert location_errors(env) == []
    app = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(fresh, app)
    edit = await rename(fresh, app, "mymod::app", "mymod::web::frontend")
    close_doc(fresh, app)
    edited, moved = apply_edit(edit)
    target = os.path.join(env, "modules/mymod/manifests/web/frontend.pp")
    assert moved == [(app, target)]
    assert open(target).read().startswith("# @param port the port\nclass mymod::web::frontend (")
    # nothing still names the old class; Puppet compiles the catalog (includes, Class[...], inherits,
    # $mymod::web::frontend::port and the Hiera keys mymod::web::frontend::user all resolve)
    assert occurrences(env, r"(?i)(mymod::app)\b") == set()
    assert location_errors(env) == []
    assert "port=8080 user=deploy" in puppet_compile(env)
    # the server follows: references of the new name come from the moved file too
    tell_server(fresh, edited, moved)
    site = os.path.join(env, "manifests/site.pp")

    want = occurrences(env, name_pattern("mymod::web::frontend"))
    assert ("modules/mymod/manifests/web/frontend.pp", 1, 6) in want

    async def found():
        return locs(env, await references(fresh, site, "mymod::web::frontend")) == want

    await until(found)


async def test_rename_parameter_body_named_uses_and_hiera(fresh: LanguageClient, fresh_env):
    env = fresh_env
    app = os.path.join(env, "modules/mymod/manifests/app.pp")
    open_doc(fresh, app)
    edit = await rename(fresh, app, "$user", "owner", delta=1)
    close_doc(fresh, app)
    edited, moved = apply_edit(edit)
    assert moved == []
    text = open(app).read()
    assert "String $owner = 'app'" in text and "content => $owner" in text
    assert "'mymod::app::owner': deploy" in open(os.path.join(env, "data/common.yaml")).read()
    # Puppet finds the renamed Hiera key and the qualified variable (strict variables)
    assert "port=8080 user=deploy" in puppet_compile(env)
    tell_server(fresh, edited, moved)
    open_doc(fresh, app)
    edit = await rename(fresh, app, "$port", "listen_port", delta=1)
    close_doc(fresh, app)
    apply_edit(edit)
    site = open(os.path.join(env, "manifests/site.pp")).read()
    assert "class { 'mymod::app': listen_port => 8080 }" in site
    # vhost's own parameter `port` is another parameter: untouched
    assert "mymod::vhost { 'main': port => $listen_port" in open(app).read()
    assert "port=8080 user=deploy" in puppet_compile(env)
    # a function's parameter (a local variable): its two places in the function, nothing else
    fn = os.path.join(env, "modules/mymod/functions/double.pp")
    edit = await rename(fresh, fn, "$x", "value", delta=1)
    edited, _moved = apply_edit(edit)
    assert edited == [fn]
    assert open(fn).read() == "function mymod::double(Integer $value) >> Integer {\n  $value * 2\n}\n"
    assert "port=8080 user=deploy" in puppet_compile(env)


async def test_rename_define_function_and_type_alias(fresh: LanguageClient, fresh_env):
    env = fresh_env
    steps = [
        (
            "modules/mymod/manifests/vhost.pp",
            "mymod::vhost",
            "mymod::web::vhost",
            "modules/mymod/manifests/web/vhost.pp",
        ),
        (
            "modules/mymod/functions/double.pp",
            "mymod::double",
            "mymod::twice",
            "modules/mymod/functions/twice.pp",
        ),
        ("modules/mymod/types/port.pp", "Mymod::Port", "Mymod::Tcp_port", "modules/mymod/types/tcp_port.pp"),
        # into another module: the client renames files and module `other` exists
        (
            "modules/mymod/manifests/params.pp",
            "mymod::params",
            "other::params",
            "modules/other/manifests/params.pp",
        ),
    ]
    for rel, needle, new, target in steps:
        path = os.path.join(env, rel)
        open_doc(fresh, path)
        edit = await rename(fresh, path, needle, new)
        close_doc(fresh, path)
        edited, moved = apply_edit(edit)
        assert moved == [(path, os.path.join(env, target))]
        tell_server(fresh, edited, moved)
        assert occurrences(env, "(?i)" + name_pattern(needle)) == set()
        assert location_errors(env) == []
        puppet_compile(env)

        async def settled(new=new, target=target):
            got = locs(env, await references(fresh, os.path.join(env, target), new.split("::")[-1]))
            return got == occurrences(env, "(?i)" + name_pattern(new))

        await until(settled)
    assert "Mymod::Tcp_port $port" in open(os.path.join(env, "modules/mymod/manifests/web/vhost.pp")).read()


# ----------------------------------------------------------------------------------------------- local variables

LOCALS = {
    "manifests/site.pp": FILES["manifests/site.pp"].replace(
        "  include other\n",
        "  include other\n  $label = mymod::label('x')\n  notice(\"label=${label}\")\n",
    ),
    "modules/mymod/functions/label.pp": (
        "function mymod::label(String $name) >> String {\n"
        "  $port = 8080\n"
        '  $prefix = "${name}:"\n'
        "  [1].each |$port| { notice($port) }\n"
        '  "${prefix}${port}"\n'
        "}\n"
    ),
    # a class's body variable and a define's parameter with keys of the same names: only a class
    # parameter has a Hiera key, so these keys are no uses of them
    "data/common.yaml": FILES["data/common.yaml"]
    + "mymod::app::url: unused\nmymod::vhost::docroot: /unused\n",
}


with_locals = pytest.mark.parametrize("fresh_env", [LOCALS], indirect=True)


@with_locals
async def test_rename_local_variables_in_their_scope_only(fresh: LanguageClient, fresh_env):
    env = fresh_env
    assert "label=x:8080" in puppet_compile(env)
    fn = os.path.join(env, "modules/mymod/functions/label.pp")
    # a function's body variable: its uses in the function, not the lambda's parameter of that name
    edit = await rename(fresh, fn, "$port = 8080", "listen", delta=1)
    edited, _moved = apply_edit(edit)
    assert edited == [fn]
    assert open(fn).read() == LOCALS["modules/mymod/functions/label.pp"].replace(
        "$port = 8080", "$listen = 8080"
    ).replace("${port}", "${listen}")
    tell_server(fresh, edited, [])
    # a node's variable
    site = os.path.join(env, "manifests/site.pp")
    open_doc(fresh, site)
    edit = await rename(fresh, site, "${label}", "text", delta=2)
    close_doc(fresh, site)
    edited, _moved = apply_edit(edit)
    assert edited == [site]
    assert "  $text = mymod::label('x')\n  notice(\"label=${text}\")\n" in open(site).read()
    tell_server(fresh, edited, [])
    # a class's body variable: its uses, and not the Hiera key of the same name
    app = os.path.join(env, "modules/mymod/manifests/app.pp")
    edit = await rename(fresh, app, "$url", "address", delta=1)
    edited, _moved = apply_edit(edit)
    assert edited == [app]
    text = open(app).read()
    assert '  $address = "http://localhost:${port}/"\n' in text and "docroot => $address }" in text
    assert "mymod::app::url: unused" in open(os.path.join(env, "data/common.yaml")).read()
    assert "label=x:8080" in puppet_compile(env)


@with_locals
async def test_hiera_key_is_no_use_of_a_local_variable_or_define_parameter(fresh: LanguageClient, fresh_env):
    env = fresh_env
    app = os.path.join(env, "modules/mymod/manifests/app.pp")
    vhost = os.path.join(env, "modules/mymod/manifests/vhost.pp")
    got = locs(env, await references(fresh, app, "$url", delta=1))
    assert got == {("modules/mymod/manifests/app.pp", 5, 3), ("modules/mymod/manifests/app.pp", 6, 52)}
    got = locs(env, await references(fresh, vhost, "$docroot", delta=1))
    assert {p for p, *_ in got} == {"modules/mymod/manifests/vhost.pp", "modules/mymod/manifests/app.pp"}
    # a class parameter's Hiera key is one of its uses
    got = locs(env, await references(fresh, app, "$user", delta=1))
    assert ("data/common.yaml", 2, 1) in got
