"""LSP glue for what the server knows beyond the open file (server/analysis/world.py, server/analysis/hiera.py):
hover, definition and completion for Ruby-defined and built-in functions and types, facts and Hiera
keys; ``textDocument/signatureHelp``; ``completionItem/resolve``; indexing of the module path and
its upkeep (``workspace/didChangeWorkspaceFolders``, ``workspace/didChangeWatchedFiles`` with
watchers registered at start, work-done progress).

server/lsp/server.py calls :func:`register` once and consults :func:`hover`, :func:`definition` and
:func:`completion` before its own answers.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING

from lsprotocol import types as L

from puppet_xpp.server.analysis import features as F
from puppet_xpp.server.analysis import hiera as H
from puppet_xpp.server.analysis import tables as D
from puppet_xpp.server.analysis import world as W
from puppet_xpp.server.analysis.document import path_of_uri, uri_of_path
from puppet_xpp.server.analysis.index import index_file, symbols_of, workspace_files
from puppet_xpp.server.analysis.workspace import environment_at, find_environment

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

WATCH_GLOBS = ("**/*.pp", "**/*.epp", "**/*.rb", "**/hiera.yaml", "**/data/**/*.yaml", "**/data/**/*.json")


def index_roots(ls) -> list:
    """Workspace folders, the configured module path, and each folder's environment module path."""
    out: list = []
    for r in ls.roots:
        out.append(r)
        env = environment_at(r) or find_environment(os.path.join(r, "x.pp"))
        for d in env.modulepath if env is not None else ():
            out.append(d)
    out.extend(ls.settings.modulepath)
    seen: set[str] = set()
    res: list[str] = []
    for d in out:
        d = os.path.abspath(d)
        if d not in seen and os.path.isdir(d) and not any(d.startswith(s + os.sep) for s in seen):
            seen.add(d)
            res.append(d)
    return res


def owning_environment(ls, path: str) -> str | None:
    """The directory of the workspace environment whose module path holds `path` (a module on an
    absolute module path outside the environment's directory, where the file's own location finds
    no environment), or None."""
    from puppet_xpp.xpp.environment import find_environment as find_env

    for r in ls.roots:
        env = find_env(r)
        if env is not None and env.module_of(path) is not None:
            return env.root
    return None


def _level(ls) -> str | None:
    """The language level the built-ins are taken from (setting puppetVersion)."""
    return getattr(ls.settings, "puppet_version", None)


def _rng(lines, off, length):
    (l0, c0), (l1, c1) = lines.range(off, max(0, length))
    return L.Range(start=L.Position(line=l0, character=c0), end=L.Position(line=l1, character=c1))


def _prange(r):
    (l0, c0), (l1, c1) = r
    return L.Range(start=L.Position(line=l0, character=c0), end=L.Position(line=l1, character=c1))


def _hover_obj(text, rng):
    return L.Hover(contents=L.MarkupContent(kind=L.MarkupKind.Markdown, value=text), range=rng)


# ----------------------------------------------------------------------------------------------- hover


def function_markdown(sym) -> str:
    name = sym.name
    sigs = W.signatures_of(sym)
    head = "\n".join(s.label(name) for s in sigs) or f"{name}(...)"
    origin = {
        "ruby4": "Ruby function (4.x API)",
        "ruby3": "Ruby function (3.x API)",
        "builtin": "built-in function",
    }
    text = f"```puppet\n{head}\n```\n({origin.get(sym.origin, 'function')})"
    doc = W.doc_of(sym)
    if doc:
        text += "\n\n" + F.doc_markdown(doc)
    return text


def type_markdown(sym) -> str:
    origin = {
        "native": "resource type (Ruby)",
        "resource_api": "resource type (Resource API)",
        "builtin": "core resource type",
    }
    namevars = [a.name for a in sym.attrs if a.namevar]
    text = f"**{sym.name}** ({origin.get(sym.origin, 'resource type')})"
    if namevars:
        text += f"\n\nnamevar: `{'`, `'.join(namevars)}`"
    props = [a.name for a in sym.attrs if a.kind == "property"]
    params = [a.name for a in sym.attrs if a.kind != "property"]
    if props:
        text += "\n\nproperties: " + ", ".join(props)
    if params:
        text += "\n\nparameters: " + ", ".join(params)
    doc = W.doc_of(sym)
    if doc:
        text += "\n\n" + F.doc_markdown(doc)
    return text


def attribute_markdown(owner, attr, kind) -> str:
    if kind == "type":
        what = "namevar" if attr.namevar else attr.kind
        text = f"**{attr.name}** ({what} of {owner.name})"
        if attr.type:
            text += f"\n\ntype: `{attr.type}`"
        if attr.values:
            text += "\n\nallowed values: " + ", ".join(f"`{v}`" for v in attr.values)
        if attr.default:
            text += f"\n\ndefault: `{attr.default}`"
        doc = W.attribute_doc(owner, attr)
    else:
        text = f"```puppet\n{attr.type + ' ' if attr.type else ''}${attr.name}{' = ' + attr.default if attr.default else ''}\n```\n(parameter of {kind} {owner.name})"
        doc = attr.doc
    if doc:
        text += "\n\n" + F.doc_markdown(doc)
    return text


def hover(ls, uri, an, pos):
    off = an.lines.offset(pos.line, pos.character)
    at = W.attribute_at(an, off)
    if at is not None:
        rtype, name, s, e = at
        if rtype == "class":
            rtype = W.resource_title(an.data, s) or rtype
        attrs, owner, kind = W.attributes_of(ls.index, rtype, _level(ls))
        for a in attrs:
            if a.name == name:
                return _hover_obj(attribute_markdown(owner, a, kind), _rng(an.lines, s, e - s))
        return None
    hk = H.key_at(an, off)
    if hk is not None:
        key, s, e, param = hk
        text = H.hover_markdown(hiera_of(ls, uri), key)
        if param is not None:  # the parameter itself first, then the data that sets it
            typ, dflt = F.expr_text(an, param.type_expr), F.expr_text(an, param.value)
            head = f"```puppet\n{typ + ' ' if typ else ''}${param.name}{' = ' + dflt if dflt else ''}\n```"
            if text is None:
                return None  # no data sets it: the server's plain parameter hover
            text = head + "\n\n" + text
        return _hover_obj(text, _rng(an.lines, s, e - s)) if text else None
    ref = W.reference_at(an, off)
    if ref is None:
        return None
    kind, name, start, length = ref
    rng = _rng(an.lines, start, length)
    if kind == "function":
        syms = W.functions_named(ls.index, name, level=_level(ls))
        if syms and syms[0].origin != "puppet":
            return _hover_obj(function_markdown(syms[0]), rng)
        return None
    if kind in ("class_or_define", "type"):
        if ls.index.lookup(name, ("class", "define")):
            return None
        t = W.resource_type_named(ls.index, name, _level(ls))
        if t is not None:
            return _hover_obj(type_markdown(t), rng)
    return None


# ----------------------------------------------------------------------------------------------- definition


def definition(ls, uri, an, pos):
    off = an.lines.offset(pos.line, pos.character)
    hk = H.key_at(an, off)
    if hk is not None:
        locs = [
            L.Location(uri=uri_of_path(p), range=_prange(((ln, c0), (ln, c1))))
            for p, ln, c0, c1, _v in H.find(hiera_of(ls, uri), hk[0])
        ]
        return locs or None
    fa = W.fact_at(an, off)
    if fa is not None:  # a module's custom fact: its lib/facter file
        locs = [
            L.Location(uri=uri_of_path(f.path), range=_prange(f.selection))
            for f in ls.index.lookup(fa[0], ("fact",))
        ]
        if locs:
            return locs
    ref = W.reference_at(an, off)
    if ref is None:
        return None
    kind, name, _s, _l = ref
    syms = []
    if kind == "function":
        syms = [s for s in W.functions_named(ls.index, name, level=_level(ls)) if s.origin != "puppet"]
        if any(s.origin == "puppet" for s in ls.index.lookup(name, ("function", "plan"))):
            return None
    elif kind in ("class_or_define", "type"):
        if ls.index.lookup(name, ("class", "define")):
            return None
        t = W.resource_type_named(ls.index, name, _level(ls))
        syms = [t] if t is not None else []
    for s in syms:  # the one Puppet would call
        loc = W.location_of(s)
        if loc is not None:
            return [L.Location(uri=uri_of_path(loc[0]), range=_prange(loc[1]))]
    return None


# ----------------------------------------------------------------------------------------------- hiera


def hiera_of(ls, uri):
    """The Hiera layers seen from the document `uri` (its environment, else the first folder)."""
    path = path_of_uri(uri)
    env_root = None
    if path:
        env = find_environment(path)
        env_root = env.root if env is not None else None
    if env_root is None and ls.roots:
        env_root = ls.roots[0]
    return H.layers_for(env_root, index_roots(ls), path)


# ----------------------------------------------------------------------------------------------- signature help


def signature_help(ls, an, pos):
    off = an.lines.offset(pos.line, pos.character)
    res = W.signature_help(ls.index, an, off, symbols_of(an, ""), _level(ls))
    if res is None:
        return None
    sigs = []
    for label, spans, doc in res["signatures"]:
        sigs.append(
            L.SignatureInformation(
                label=label,
                documentation=L.MarkupContent(kind=L.MarkupKind.Markdown, value=doc) if doc else None,
                parameters=[L.ParameterInformation(label=(a, b)) for a, b in spans],
            )
        )
    return L.SignatureHelp(
        signatures=sigs, active_signature=res["active_signature"], active_parameter=res["active_parameter"]
    )


# ----------------------------------------------------------------------------------------------- completion

CK = L.CompletionItemKind


def _snippets(ls) -> bool:
    caps = ls.client_caps
    try:
        return bool(caps.text_document.completion.completion_item.snippet_support)
    except AttributeError:
        return False


def _snippet_of(sym) -> str:
    sigs = W.signatures_of(sym)
    if not sigs:
        return sym.name
    ps = [p for p in sigs[0].params if p.kind in ("required",)]
    body = ", ".join(f"${{{k + 1}:{p.name}}}" for k, p in enumerate(ps))
    return f"{sym.name}({body})"


def completion(ls, uri, an, pos, base):
    off = an.lines.offset(pos.line, pos.character)
    sp = W.special_context(an, off)
    if sp is not None:
        items = _special_items(ls, uri, an, sp)
        if items is not None:
            return _with_edits(ls, an, off, sp[1], items)
    ctx, prefix, rtype = F.completion_context(an, off)
    if ctx == "attribute":
        if rtype == "class":
            rtype = W.resource_title(an.data, off - len(prefix.encode())) or "class"
        attrs, owner, kind = W.attributes_of(ls.index, rtype, _level(ls))
        if owner is not None and (kind in ("type", "class")):
            items = []
            for a in attrs:
                detail = (
                    (
                        ("namevar " if a.namevar else "")
                        + a.kind
                        + (": " + ", ".join(a.values) if a.values else "")
                    )
                    if kind == "type"
                    else (a.type or "parameter")
                )
                items.append(
                    L.CompletionItem(
                        label=a.name,
                        kind=CK.Property,
                        detail=detail,
                        insert_text=f"{a.name} => ",
                        data={"k": "attr", "t": rtype, "n": a.name},
                    )
                )
            for a in D.META_PARAMETERS:
                items.append(
                    L.CompletionItem(
                        label=a,
                        kind=CK.Property,
                        detail="metaparameter",
                        insert_text=f"{a} => ",
                        sort_text="~" + a,
                    )
                )
            return _with_edits(ls, an, off, prefix, items)
    res = base(ls, an, pos)
    items = list(res.items) if res is not None else []
    if ctx == "variable":
        if not prefix.startswith("::") or prefix.count("::") == 1:
            bare = prefix.startswith("::")
            custom = [s.name for s in ls.index.all() if s.kind == "fact" and "." not in s.name]
            for f in sorted(set(W.legacy_facts()) | set(custom)):
                t = ("::" if bare else "") + f
                items.append(
                    L.CompletionItem(
                        label="$" + t, insert_text=t, filter_text=t, kind=CK.Variable, detail="legacy fact"
                    )
                )
    elif ctx == "general":
        out = []
        for it in items:
            if it.detail in ("fact",):
                continue
            if it.detail == "resource_type":
                it.kind = CK.Class
            out.append(it)
        items = out
        names = {it.label for it in items}
        # resource references: Type['title'] of the core and Ruby-defined types
        if prefix[:1].isupper():
            for t in list(D.RESOURCE_TYPES) + [
                s.name for s in ls.index.all() if s.kind in ("resource_type", "define")
            ]:
                ref = "::".join(x.capitalize() for x in t.split("::"))
                if ref not in names:
                    names.add(ref)
                    items.append(L.CompletionItem(label=ref, kind=CK.Reference, detail="resource reference"))
    return _with_edits(ls, an, off, prefix, items)


def _special_items(ls, uri, an, sp):
    kind, prefix, extra = sp
    if kind == "hiera_key":
        return [
            L.CompletionItem(label=k, kind=CK.Constant, detail=f"Hiera: {os.path.basename(p)}")
            for k, p in sorted(H.all_keys(hiera_of(ls, uri)).items())
        ]
    if kind == "value":
        rtype, attr = extra
        if rtype == "class":
            return None
        attrs, owner, k = W.attributes_of(ls.index, rtype, _level(ls))
        for a in attrs:
            if a.name == attr and getattr(a, "values", ()):
                return [
                    L.CompletionItem(label=v, kind=CK.EnumMember, detail=f"{rtype}.{attr}")
                    for v in a.values
                    if not v.startswith("/")
                ]
        return None
    if kind == "title":
        return [
            L.CompletionItem(label=t, kind=CK.Reference, detail=f"{extra} resource")
            for t in W.resource_titles(an, extra)
        ]
    if kind == "fact":
        custom = [s.name for s in ls.index.all() if s.kind == "fact"]
        return [
            L.CompletionItem(label=n, kind=CK.Field if leaf else CK.Module, detail="fact")
            for n, leaf in W.fact_keys(extra, custom)
        ]
    return None


def _with_edits(ls, an, off, prefix, items):
    """Every item gets a textEdit over the typed prefix (so `::` names complete in omnifunc and VS Code
    alike); functions get a snippet of their required parameters when the client takes snippets."""
    start = off - len(prefix.encode())
    rng = _rng(an.lines, start, off - start)
    snip = _snippets(ls)
    for it in items:
        text = it.insert_text or it.label
        if it.kind == CK.Function and it.data is None:
            syms = W.functions_named(ls.index, it.label, level=_level(ls))
            if syms:
                it.data = {"k": "fn", "n": it.label}
                if snip:
                    text = _snippet_of(syms[0])
                    it.insert_text_format = L.InsertTextFormat.Snippet
        elif it.kind in (CK.Class, CK.Struct) and it.data is None:
            it.data = {"k": "type", "n": it.label}
        it.text_edit = L.TextEdit(range=rng, new_text=text)
        it.insert_text = None
    return L.CompletionList(is_incomplete=False, items=items)


def resolve(ls, item: L.CompletionItem):
    d = item.data if isinstance(item.data, dict) else None
    if not d:
        return item
    text = None
    if d.get("k") == "fn":
        syms = W.functions_named(ls.index, d.get("n", ""), level=_level(ls))
        if syms:
            text = function_markdown(syms[0]) if syms[0].origin != "puppet" else F.doc_markdown(syms[0].doc)
    elif d.get("k") == "type":
        t = W.resource_type_named(ls.index, d.get("n", ""), _level(ls))
        if t is not None and not ls.index.lookup(d.get("n", ""), ("class", "define")):
            text = type_markdown(t)
        else:
            for s in ls.index.lookup(d.get("n", ""), ("class", "define")):
                text = f"```puppet\n{s.signature}\n```\n\n{F.doc_markdown(s.doc)}"
                break
    elif d.get("k") == "attr":
        attrs, owner, kind = W.attributes_of(ls.index, d.get("t", ""), _level(ls))
        for a in attrs:
            if a.name == d.get("n"):
                text = attribute_markdown(owner, a, kind)
    if text:
        item.documentation = L.MarkupContent(kind=L.MarkupKind.Markdown, value=text)
    return item


# ----------------------------------------------------------------------------------------------- indexing


def register(ls: LanguageServer, with_analysis):
    """Register this module's LSP features on server `ls` (with_analysis: lsp.py's runner)."""

    @ls.feature(L.TEXT_DOCUMENT_SIGNATURE_HELP, L.SignatureHelpOptions(trigger_characters=["(", ","]))
    async def signature_help_(ls, params: L.SignatureHelpParams):
        pos = params.position
        return await with_analysis(ls, params.text_document.uri, lambda an: signature_help(ls, an, pos), None)

    @ls.feature(L.COMPLETION_ITEM_RESOLVE)
    def completion_resolve(ls, item: L.CompletionItem):
        try:
            return resolve(ls, item)
        except Exception:  # never fail a resolve: the item as it was
            return item

    @ls.feature(L.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls, params: L.DidChangeWatchedFilesParams):
        H.invalidate()
        for ch in params.changes:
            path = path_of_uri(ch.uri)
            if not path or not (path.endswith((".pp", ".rb"))):
                continue
            if ch.type == L.FileChangeType.Deleted:
                ls.index.remove_file(path)
            elif ch.uri not in ls.docs:
                syms = await ls.on_worker(index_file, path)
                ls.index.set_file(path, syms)

    @ls.feature(L.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(ls, params: L.DidChangeWorkspaceFoldersParams):
        before = set(index_roots(ls))
        for f in params.event.removed:
            p = path_of_uri(f.uri)
            if p in ls.roots:
                ls.roots.remove(p)
        for f in params.event.added:
            p = path_of_uri(f.uri)
            if p and p not in ls.roots:
                ls.roots.append(p)
        after = index_roots(ls)
        gone = [r for r in before if r not in after]
        for path in list(ls.index.by_path):
            if any(path.startswith(r + os.sep) for r in gone) and not any(
                path.startswith(r + os.sep) for r in after
            ):
                ls.index.remove_file(path)
        H.invalidate()
        new = [r for r in after if r not in before]
        if new:
            await index_async(ls, new, "Indexing added folders")


async def after_initialized(ls):
    """Ask the client to watch the files the index and Hiera follow (when it can register watchers)."""
    caps = ls.client_caps
    try:
        dyn = caps.workspace.did_change_watched_files.dynamic_registration
    except AttributeError:
        dyn = False
    if not dyn:
        return
    opts = L.DidChangeWatchedFilesRegistrationOptions(
        watchers=[L.FileSystemWatcher(glob_pattern=g) for g in WATCH_GLOBS]
    )
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(
                L.RegistrationParams(
                    registrations=[
                        L.Registration(
                            id="puppet-xpp-watch",
                            method=L.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=opts,
                        )
                    ]
                )
            ),
            5,
        )
    except Exception:
        pass


async def index_async(ls, roots, title="Indexing Puppet workspace"):
    """Index the files under `roots` on the analysis worker, with work-done progress."""
    loop = asyncio.get_running_loop()
    files = await loop.run_in_executor(None, workspace_files, roots)
    token = None
    window = getattr(ls.client_caps, "window", None) if ls.client_caps is not None else None
    if getattr(window, "work_done_progress", False):
        token = f"puppet-xpp-index-{id(ls)}-{time.monotonic_ns()}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(
                token, L.WorkDoneProgressBegin(title=title, message=f"0/{len(files)} files", percentage=0)
            )
        except Exception:
            token = None
    t0 = time.perf_counter()
    last = 0.0
    for k, path in enumerate(files):
        syms = await ls.on_worker(index_file, path)
        ls.index.set_file(path, syms)
        now = time.perf_counter()
        if token and now - last > 0.2:
            last = now
            ls.work_done_progress.report(
                token,
                L.WorkDoneProgressReport(
                    message=f"{k + 1}/{len(files)} files", percentage=int(100 * (k + 1) / max(1, len(files)))
                ),
            )
    if token:
        ls.work_done_progress.end(token, L.WorkDoneProgressEnd(message=f"Indexed {len(files)} files"))
    ls.log(f"puppet-xpp: indexed {len(files)} files in {time.perf_counter() - t0:.1f}s")
