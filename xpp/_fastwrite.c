/* The optional C Pcore writer (msgpack): the same stream as xpp/pcore/write.py's dumps_msgpack, for the
 * values the parser makes (AST nodes, lists, str, int, float, bool, None, Regexp).  Anything else -- a
 * dict, PType, IncludedObject, a subclass of str/int, an ill-typed or shared value, an int beyond 64 bits,
 * a string that is not valid Unicode -- makes it decline (return the DECLINED object, having changed
 * nothing): the Python writer then writes the document, or raises its error.  Configured from
 * xpp/pcore/write.py with the per-class tables of xpp/pcore/nodes.py and the type checks of
 * xpp/_ast_classes.h (the C reader's); PUPPET_XPP_PURE_PYTHON=1 turns it off.
 *
 * Identity table: an object held by more than one holder (its reference count beyond the holder and this
 * writer's stack) is recorded by id, as the Python writer records it; recording more than it does changes
 * no byte (an object held once is reached once).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { K_VALUE = 0, K_REFS = 1, K_REF = 2, K_OBJEND = 3 };
enum {
    X_INNER = 0x00, X_TAB = 0x01, X_ARRAY = 0x10, X_MAP = 0x11, X_PCORE_OBJECT = 0x12, X_OBJECT = 0x13,
    X_REGEXP = 0x30
};

#include "_ast_classes.h"

/* one AST class, as configure() got it */
typedef struct {
    PyTypeObject *cls;
    PyObject *getter;   /* the attribute values in wire order (raises what reading them raises) */
    PyObject *name;     /* Pcore name */
    PyObject *segs;     /* its "::" segments (a tuple of str) */
    Py_ssize_t nattr, min, refslot;
    int positioned;
    Py_ssize_t *offsets; /* of the wire attributes' __slots__ members */
    PyObject **defaults; /* per wire slot (borrowed from g_classes) */
    Kind *kinds;
} Cls;

static PyObject *g_classes;  /* what configure() got (keeps the borrowed objects alive) */
static Cls *g_cls;           /* the classes */
static Py_ssize_t g_ncls;
static PyTypeObject **g_ctype; /* open-addressing table: type -> index in g_cls (NULL: empty) */
static Py_ssize_t *g_cidx;
static size_t g_cmask;
static PyObject *g_declined; /* returned when the Python writer must decide */
static PyObject *g_regexp;   /* grammar.ast.Regexp */
static PyObject *g_ptype, *g_included; /* xpp.pcore.base.PType, IncludedObject */
static PyObject *s_sep, *s_source, *s_name, *s_values, *s_type, *s_object_type, *s_pcore;

typedef struct {
    char *p;
    Py_ssize_t n, cap;
} Buf;

static int buf_grow(Buf *b, Py_ssize_t more) {
    if (b->n + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more) cap *= 2;
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static int put(Buf *b, const char *s, Py_ssize_t n) {
    if (buf_grow(b, n)) return -1;
    memcpy(b->p + b->n, s, (size_t)n);
    b->n += n;
    return 0;
}

/* msgpack of a non-negative int (the minimal encoding), into tmp; returns its length */
static int uint_body(unsigned char *t, uint64_t v) {
    if (v < 0x80) { t[0] = (unsigned char)v; return 1; }
    if (v < 0x100) { t[0] = 0xcc; t[1] = (unsigned char)v; return 2; }
    if (v < 0x10000) { t[0] = 0xcd; t[1] = (unsigned char)(v >> 8); t[2] = (unsigned char)v; return 3; }
    if (v < 0x100000000ULL) {
        t[0] = 0xce;
        for (int i = 0; i < 4; i++) t[1 + i] = (unsigned char)(v >> (24 - 8 * i));
        return 5;
    }
    t[0] = 0xcf;
    for (int i = 0; i < 8; i++) t[1 + i] = (unsigned char)(v >> (56 - 8 * i));
    return 9;
}

static int put_int(Buf *b, long long v) {
    unsigned char t[9];
    int n;
    if (v >= 0) n = uint_body(t, (uint64_t)v);
    else if (v >= -32) { t[0] = (unsigned char)(v + 256); n = 1; }
    else if (v >= -0x80) { t[0] = 0xd0; t[1] = (unsigned char)(int8_t)v; n = 2; }
    else if (v >= -0x8000) { t[0] = 0xd1; t[1] = (unsigned char)((uint16_t)v >> 8); t[2] = (unsigned char)v; n = 3; }
    else if (v >= -0x80000000LL) {
        uint32_t u = (uint32_t)(int32_t)v;
        t[0] = 0xd2;
        for (int i = 0; i < 4; i++) t[1 + i] = (unsigned char)(u >> (24 - 8 * i));
        n = 5;
    } else {
        uint64_t u = (uint64_t)v;
        t[0] = 0xd3;
        for (int i = 0; i < 8; i++) t[1 + i] = (unsigned char)(u >> (56 - 8 * i));
        n = 9;
    }
    return put(b, (const char *)t, n);
}

/* an extension whose payload is bytes p[0..n) */
static int put_ext(Buf *b, int code, const unsigned char *p, Py_ssize_t n) {
    unsigned char h[6];
    int hn;
    if (n == 1 || n == 2 || n == 4 || n == 8 || n == 16) {
        h[0] = n == 1 ? 0xd4 : n == 2 ? 0xd5 : n == 4 ? 0xd6 : n == 8 ? 0xd7 : 0xd8;
        h[1] = (unsigned char)code;
        hn = 2;
    } else if (n < 0x100) {
        h[0] = 0xc7; h[1] = (unsigned char)n; h[2] = (unsigned char)code; hn = 3;
    } else if (n < 0x10000) {
        h[0] = 0xc8; h[1] = (unsigned char)(n >> 8); h[2] = (unsigned char)n; h[3] = (unsigned char)code; hn = 4;
    } else {
        h[0] = 0xc9;
        for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)((uint64_t)n >> (24 - 8 * i));
        h[5] = (unsigned char)code;
        hn = 6;
    }
    if (put(b, (const char *)h, hn)) return -1;
    return put(b, (const char *)p, n);
}

static int put_ext_uint(Buf *b, int code, uint64_t v) {
    unsigned char t[9];
    int n = uint_body(t, v);
    return put_ext(b, code, t, n);
}

/* msgpack str header + bytes; 1 declined (too long) */
static int put_str_bytes(Buf *b, const char *s, Py_ssize_t n) {
    unsigned char h[5];
    int hn;
    if (n < 32) { h[0] = (unsigned char)(0xa0 | n); hn = 1; }
    else if (n < 0x100) { h[0] = 0xd9; h[1] = (unsigned char)n; hn = 2; }
    else if (n < 0x10000) { h[0] = 0xda; h[1] = (unsigned char)(n >> 8); h[2] = (unsigned char)n; hn = 3; }
    else if ((uint64_t)n < 0x100000000ULL) {
        h[0] = 0xdb;
        for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)((uint64_t)n >> (24 - 8 * i));
        hn = 5;
    } else return 1;
    if (put(b, (const char *)h, hn)) return -1;
    return put(b, s, n);
}

/* the UTF-8 (surrogateescape) bytes of a str, new reference, or NULL with no error set: declined */
static PyObject *encoded(PyObject *s) {
    PyObject *e = PyUnicode_AsEncodedString(s, "utf-8", "surrogateescape");
    if (!e) PyErr_Clear();
    return e;
}

typedef struct {
    int kind;
    PyObject *obj; /* owned */
    Py_ssize_t aux; /* K_REF: index of its K_REFS record */
} Entry;

typedef struct {
    Py_ssize_t after;
    PyObject *seen; /* set of int */
} RefsRec;

typedef struct {
    Entry *e;
    Py_ssize_t n, cap;
} Stack;

static int spush(Stack *s, int kind, PyObject *o, Py_ssize_t aux) {
    if (s->n == s->cap) {
        Py_ssize_t cap = s->cap ? s->cap * 2 : 256;
        Entry *e = PyMem_Realloc(s->e, (size_t)cap * sizeof(Entry));
        if (!e) {
            PyErr_NoMemory();
            return -1;
        }
        s->e = e;
        s->cap = cap;
    }
    Py_INCREF(o);
    s->e[s->n].kind = kind;
    s->e[s->n].obj = o;
    s->e[s->n].aux = aux;
    s->n++;
    return 0;
}

#define DECLINE 1
#define MAX_ATTRS 64 /* wire attributes of a class at most (configure() checks) */
#define FAIL (-1)

/* The identity table: object address -> index (open addressing, linear probing; never shrinks). */
typedef struct {
    uintptr_t *keys; /* 0: empty */
    Py_ssize_t *vals;
    size_t mask, used;
} Ids;

static size_t ids_slot(const Ids *m, uintptr_t k) {
    size_t h = (size_t)((k >> 4) * 0x9E3779B97F4A7C15ULL);
    size_t i = h & m->mask;
    while (m->keys[i] && m->keys[i] != k) i = (i + 1) & m->mask;
    return i;
}

/* the recorded index of o, or -1 */
static Py_ssize_t stab_get(Ids *m, PyObject *o) {
    if (!m->used) return -1;
    size_t i = ids_slot(m, (uintptr_t)o);
    return m->keys[i] ? m->vals[i] : -1;
}

static int stab_set(Ids *m, PyObject *o, Py_ssize_t v) {
    if ((m->used + 1) * 2 > m->mask + 1) {
        size_t cap = (m->mask + 1) * 2;
        if (cap < 64) cap = 64;
        uintptr_t *ok = m->keys;
        Py_ssize_t *ov = m->vals;
        size_t oc = m->keys ? m->mask + 1 : 0;
        m->keys = PyMem_Calloc(cap, sizeof(uintptr_t));
        m->vals = PyMem_Malloc(cap * sizeof(Py_ssize_t));
        if (!m->keys || !m->vals) {
            PyMem_Free(m->keys);
            PyMem_Free(m->vals);
            m->keys = ok;
            m->vals = ov;
            PyErr_NoMemory();
            return -1;
        }
        m->mask = cap - 1;
        for (size_t j = 0; j < oc; j++)
            if (ok[j]) {
                size_t i = ids_slot(m, ok[j]);
                m->keys[i] = ok[j];
                m->vals[i] = ov[j];
            }
        PyMem_Free(ok);
        PyMem_Free(ov);
    }
    size_t i = ids_slot(m, (uintptr_t)o);
    if (!m->keys[i]) m->used++;
    m->keys[i] = (uintptr_t)o;
    m->vals[i] = v;
    return 0;
}

/* An object with an identity (node, list, Regexp) met: 1 when it was written before (a back-reference
 * now, or declined when checked: the Python writer raises); else 0, with it recorded when held elsewhere
 * too and the count advanced.  *r: the result so far. */
static int again(Ids *stab, PyObject *v, int check, Buf *b, Py_ssize_t *count, int *r) {
    Py_ssize_t k = stab_get(stab, v);
    if (k >= 0) {
        *r = check ? DECLINE : put_ext_uint(b, X_TAB, (uint64_t)k);
        return 1;
    }
    if (Py_REFCNT(v) > 2 && stab_set(stab, v, *count) < 0) *r = FAIL;
    ++*count;
    return 0;
}

/* a str through the writer's table: its index, or the string itself the first time */
static int put_tabled_str(Buf *b, PyObject *wtab, PyObject *s) {
    PyObject *k = PyDict_GetItemWithError(wtab, s);
    if (k) return put_ext_uint(b, X_INNER, (uint64_t)PyLong_AsSsize_t(k));
    if (PyErr_Occurred()) return FAIL;
    PyObject *e = encoded(s);
    if (!e) return DECLINE;
    PyObject *idx = PyLong_FromSsize_t(PyDict_GET_SIZE(wtab));
    int r = idx ? PyDict_SetItem(wtab, s, idx) : -1;
    Py_XDECREF(idx);
    if (r == 0) r = put_str_bytes(b, PyBytes_AS_STRING(e), PyBytes_GET_SIZE(e));
    Py_DECREF(e);
    return r;
}

/* the class description of an exact type, or NULL */
static Cls *cls_of(PyTypeObject *t) {
    if (!g_ctype) return NULL;
    size_t i = (size_t)(((uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ULL) & g_cmask;
    while (g_ctype[i]) {
        if (g_ctype[i] == t) return &g_cls[g_cidx[i]];
        i = (i + 1) & g_cmask;
    }
    return NULL;
}

/* the first PCORE_OBJECT_START(name, n) of a document, as xpp.pcore.write._marker writes it: the name's
 * segments through the writer's table (a segment met before by its index), then n; (name, n) takes the
 * next index.  segs: the name's "::" segments. */
static int put_marker(Buf *b, PyObject *wtab, PyObject *name, PyObject *segs, Py_ssize_t n) {
    Buf body = {NULL, 0, 0};
    unsigned char t[9];
    int r = put(&body, (const char *)t, uint_body(t, (uint64_t)PyTuple_GET_SIZE(segs)));
    for (Py_ssize_t i = 0; r == 0 && i < PyTuple_GET_SIZE(segs); i++) {
        PyObject *s = PyTuple_GET_ITEM(segs, i);
        PyObject *k = PyDict_GetItemWithError(wtab, s);
        if (k) r = put(&body, (const char *)t, uint_body(t, (uint64_t)PyLong_AsSsize_t(k)));
        else if (PyErr_Occurred()) r = FAIL;
        else {
            PyObject *e = encoded(s);
            PyObject *idx = e ? PyLong_FromSsize_t(PyDict_GET_SIZE(wtab)) : NULL;
            if (!e) r = DECLINE;
            else if (!idx || PyDict_SetItem(wtab, s, idx) < 0) r = FAIL;
            else r = put_str_bytes(&body, PyBytes_AS_STRING(e), PyBytes_GET_SIZE(e));
            Py_XDECREF(idx);
            Py_XDECREF(e);
        }
    }
    if (r == 0) r = put(&body, (const char *)t, uint_body(t, (uint64_t)n));
    if (r == 0) {
        PyObject *nn = PyLong_FromSsize_t(n);
        PyObject *key = nn ? PyTuple_Pack(2, name, nn) : NULL;
        PyObject *idx = key ? PyLong_FromSsize_t(PyDict_GET_SIZE(wtab)) : NULL;
        if (!idx || PyDict_SetItem(wtab, key, idx) < 0) r = FAIL;
        Py_XDECREF(idx);
        Py_XDECREF(key);
        Py_XDECREF(nn);
    }
    if (r == 0) r = put_ext(b, X_PCORE_OBJECT, (const unsigned char *)body.p, body.n);
    PyMem_Free(body.p);
    return r;
}

static int encode(PyObject *value, int check, Buf *b) {
    PyObject *wtab = PyDict_New(), *mrows = PyDict_New();
    Ids ids = {NULL, NULL, 0, 0};
    Ids *stab = &ids;
    Stack st = {NULL, 0, 0};
    RefsRec *refs = NULL;
    Py_ssize_t nrefs = 0, count = 0;
    int r = 0;
    if (!wtab || !mrows || spush(&st, K_VALUE, value, 0)) { r = FAIL; goto done; }
    while (st.n && r == 0) {
        Entry en = st.e[--st.n];
        PyObject *v = en.obj; /* owned: released at the end of the iteration */
        PyTypeObject *t = Py_TYPE(v);
        if (en.kind == K_REF) {
            RefsRec *rr = &refs[en.aux];
            Py_ssize_t k = stab_get(stab, v);
            if (k < 0) r = spush(&st, K_VALUE, v, 0); /* written here, in place */
            else {
                PyObject *ki = PyLong_FromSsize_t(k);
                int seen = ki ? PySet_Contains(rr->seen, ki) : -1;
                if (seen < 0) r = FAIL;
                else if (k <= rr->after || seen || !cls_of(t)) r = DECLINE;
                else if (PySet_Add(rr->seen, ki) < 0) r = FAIL;
                else r = put_ext_uint(b, X_TAB, (uint64_t)k);
                Py_XDECREF(ki);
                if (r == 0 && PyErr_Occurred()) r = FAIL;
            }
        } else if (en.kind == K_REFS) {
            if (!PyList_CheckExact(v)) r = DECLINE;
            else {
                Py_ssize_t k = stab_get(stab, v);
                if (k >= 0) r = DECLINE;
                else if (stab_set(stab, v, count) < 0) r = FAIL;
                else {
                    count++;
                    RefsRec *nr = PyMem_Realloc(refs, (size_t)(nrefs + 1) * sizeof(RefsRec));
                    if (!nr) r = FAIL, PyErr_NoMemory();
                    else {
                        refs = nr;
                        refs[nrefs].after = en.aux;
                        refs[nrefs].seen = PySet_New(NULL);
                        if (!refs[nrefs].seen) r = FAIL;
                        else {
                            nrefs++;
                            r = put_ext_uint(b, X_ARRAY, (uint64_t)PyList_GET_SIZE(v));
                            for (Py_ssize_t i = PyList_GET_SIZE(v) - 1; r == 0 && i >= 0; i--)
                                r = spush(&st, K_REF, PyList_GET_ITEM(v, i), nrefs - 1);
                        }
                    }
                }
            }
        } else if (t == &PyLong_Type) {
            int overflow = 0;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow) r = DECLINE;
            else if (x == -1 && PyErr_Occurred()) r = FAIL;
            else r = put_int(b, x);
        } else if (t == &PyUnicode_Type) {
            r = put_tabled_str(b, wtab, v);
        } else if (t == &PyList_Type) {
            if (!again(stab, v, check, b, &count, &r)) {
                if (r == 0) r = put_ext_uint(b, X_ARRAY, (uint64_t)PyList_GET_SIZE(v));
                for (Py_ssize_t i = PyList_GET_SIZE(v) - 1; r == 0 && i >= 0; i--)
                    r = spush(&st, K_VALUE, PyList_GET_ITEM(v, i), 0);
            }
        } else if (en.kind == K_OBJEND) {
            /* an IncludedObject takes its index after its type value (always recorded) */
            if (stab_set(stab, v, count) < 0) r = FAIL;
            count++;
        } else if (t == &PyDict_Type) {
            if (!again(stab, v, check, b, &count, &r)) {
                if (r == 0) r = put_ext_uint(b, X_MAP, (uint64_t)PyDict_GET_SIZE(v));
                PyObject *items = r == 0 ? PyDict_Items(v) : NULL;
                if (r == 0 && !items) r = FAIL;
                for (Py_ssize_t i = items ? PyList_GET_SIZE(items) - 1 : -1; r == 0 && i >= 0; i--) {
                    PyObject *kv = PyList_GET_ITEM(items, i);
                    r = spush(&st, K_VALUE, PyTuple_GET_ITEM(kv, 1), 0);
                    if (r == 0) r = spush(&st, K_VALUE, PyTuple_GET_ITEM(kv, 0), 0);
                }
                Py_XDECREF(items);
            }
        } else if ((PyObject *)t == g_ptype) {
            if (!again(stab, v, check, b, &count, &r)) {
                PyObject *name = r == 0 ? PyObject_GetAttr(v, s_name) : NULL;
                PyObject *values = name ? PyObject_GetAttr(v, s_values) : NULL;
                if (r == 0 && !values) r = FAIL;
                else if (r == 0 && (!PyUnicode_CheckExact(name) || PyUnicode_Tailmatch(name, s_pcore, 0, 7, -1) != 1 ||
                                    !PyList_CheckExact(values)))
                    r = DECLINE;
                if (r == 0) {
                    PyObject *nn = PyLong_FromSsize_t(PyList_GET_SIZE(values));
                    PyObject *key = nn ? PyTuple_Pack(2, name, nn) : NULL;
                    PyObject *k = key ? PyDict_GetItemWithError(wtab, key) : NULL;
                    if (!key || PyErr_Occurred()) r = FAIL;
                    else if (k) r = put_ext_uint(b, X_INNER, (uint64_t)PyLong_AsSsize_t(k));
                    else {
                        PyObject *parts = PyUnicode_Split(name, s_sep, -1);
                        PyObject *segs = parts ? PyList_AsTuple(parts) : NULL;
                        r = segs ? put_marker(b, wtab, name, segs, PyList_GET_SIZE(values)) : FAIL;
                        Py_XDECREF(segs);
                        Py_XDECREF(parts);
                    }
                    Py_XDECREF(key);
                    Py_XDECREF(nn);
                    for (Py_ssize_t i = PyList_GET_SIZE(values) - 1; r == 0 && i >= 0; i--)
                        r = spush(&st, K_VALUE, PyList_GET_ITEM(values, i), 0);
                }
                Py_XDECREF(name);
                Py_XDECREF(values);
            }
        } else if ((PyObject *)t == g_included) {
            Py_ssize_t k = stab_get(stab, v);
            PyObject *type = NULL, *values = NULL, *name = NULL;
            if (k >= 0) r = check ? DECLINE : put_ext_uint(b, X_TAB, (uint64_t)k);
            else {
                type = PyObject_GetAttr(v, s_type);
                values = type ? PyObject_GetAttr(v, s_values) : NULL;
                name = values && (PyObject *)Py_TYPE(type) == g_ptype ? PyObject_GetAttr(type, s_name) : NULL;
                if (!values) r = FAIL;
                else if (!name || !PyList_CheckExact(values) || !PyUnicode_CheckExact(name) ||
                         PyUnicode_Compare(name, s_object_type) != 0)
                    r = DECLINE; /* (PyErr cleared by the caller) */
                if (r == 0) {
                    PyObject *nn = PyLong_FromSsize_t(PyList_GET_SIZE(values) + 1);
                    PyObject *key = nn ? PyTuple_Pack(2, Py_None, nn) : NULL;
                    PyObject *k2 = key ? PyDict_GetItemWithError(wtab, key) : NULL;
                    if (!key || PyErr_Occurred()) r = FAIL;
                    else if (k2) r = put_ext_uint(b, X_INNER, (uint64_t)PyLong_AsSsize_t(k2));
                    else {
                        PyObject *idx = PyLong_FromSsize_t(PyDict_GET_SIZE(wtab));
                        if (!idx || PyDict_SetItem(wtab, key, idx) < 0) r = FAIL;
                        else r = put_ext_uint(b, X_OBJECT, (uint64_t)(PyList_GET_SIZE(values) + 1));
                        Py_XDECREF(idx);
                    }
                    Py_XDECREF(key);
                    Py_XDECREF(nn);
                    for (Py_ssize_t i = PyList_GET_SIZE(values) - 1; r == 0 && i >= 0; i--)
                        r = spush(&st, K_VALUE, PyList_GET_ITEM(values, i), 0);
                    if (r == 0) r = spush(&st, K_OBJEND, v, 0);
                    if (r == 0) r = spush(&st, K_VALUE, type, 0);
                }
            }
            Py_XDECREF(type);
            Py_XDECREF(values);
            Py_XDECREF(name);
        } else if (v == Py_None) {
            r = put(b, "\xc0", 1);
        } else if (t == &PyBool_Type) {
            r = put(b, v == Py_True ? "\xc3" : "\xc2", 1);
        } else if (t == &PyFloat_Type) {
            unsigned char d[9];
            d[0] = 0xcb;
            if (PyFloat_Pack8(PyFloat_AS_DOUBLE(v), (char *)d + 1, 0) < 0) r = FAIL;
            else r = put(b, (const char *)d, 9);
        } else if ((PyObject *)t == g_regexp) {
            if (!again(stab, v, check, b, &count, &r)) {
                PyObject *src = r == 0 ? PyObject_GetAttr(v, s_source) : NULL;
                if (r == 0 && !src) r = FAIL;
                else if (r == 0 && !PyUnicode_CheckExact(src)) r = DECLINE;
                else if (r == 0) {
                    PyObject *k2 = PyDict_GetItemWithError(wtab, v);
                    if (k2) r = put_ext_uint(b, X_INNER, (uint64_t)PyLong_AsSsize_t(k2));
                    else if (PyErr_Occurred()) r = FAIL;
                    else {
                        PyObject *e = encoded(src);
                        if (!e) r = DECLINE;
                        else {
                            PyObject *idx = PyLong_FromSsize_t(PyDict_GET_SIZE(wtab));
                            if (!idx || PyDict_SetItem(wtab, v, idx) < 0) r = FAIL;
                            Py_XDECREF(idx);
                            if (r == 0) {
                                Buf inner = {NULL, 0, 0};
                                r = put_str_bytes(&inner, PyBytes_AS_STRING(e), PyBytes_GET_SIZE(e));
                                if (r == 0) r = put_ext(b, X_REGEXP, (const unsigned char *)inner.p, inner.n);
                                PyMem_Free(inner.p);
                            }
                            Py_DECREF(e);
                        }
                    }
                }
                Py_XDECREF(src);
            }
        } else {
            Cls *ci = cls_of(t);
            if (!ci) r = DECLINE;
            else if (!again(stab, v, check, b, &count, &r) && r == 0) {
                Py_ssize_t self = count - 1, n = ci->nattr, held = 0;
                PyObject *vals[MAX_ATTRS];
                for (; held < n; held++) { /* (held while written: an __eq__ below may run code) */
                    vals[held] = *(PyObject **)((char *)v + ci->offsets[held]);
                    if (!vals[held]) { /* an attribute not set: what reading it raises */
                        PyObject *raised = PyObject_CallOneArg(ci->getter, v);
                        Py_XDECREF(raised);
                        r = raised ? DECLINE : FAIL;
                        break;
                    }
                    Py_INCREF(vals[held]);
                }
                for (Py_ssize_t i = 0; r == 0 && check && i < n; i++) {
                    int c = check_kind(&ci->kinds[i], vals[i]);
                    if (c <= 0) r = c < 0 ? FAIL : DECLINE; /* ill-typed: the Python writer raises */
                }
                while (r == 0 && n > ci->min) {
                    PyObject *last = vals[n - 1], *dv = ci->defaults[n - 1];
                    int eq = PyObject_RichCompareBool(last, dv, Py_EQ);
                    if (eq < 0) r = FAIL;
                    else if (eq && Py_TYPE(last) == Py_TYPE(dv)) n--;
                    else break;
                }
                if (r == 0) {
                    /* the class's marker: written whole the first time, then by its index */
                    PyObject *row = PyDict_GetItemWithError(mrows, (PyObject *)t);
                    if (!row && !PyErr_Occurred()) {
                        row = PyList_New(0);
                        if (row && PyDict_SetItem(mrows, (PyObject *)t, row) < 0) r = FAIL;
                        Py_XDECREF(row); /* (the dict holds it) */
                    }
                    if (!row || r) r = FAIL;
                    else {
                        while (r == 0 && PyList_GET_SIZE(row) <= n) r = PyList_Append(row, Py_None);
                        PyObject *m = r == 0 ? PyList_GET_ITEM(row, n) : NULL;
                        if (r == 0 && m == Py_None) {
                            r = put_marker(b, wtab, ci->name, ci->segs, n);
                            Buf ib = {NULL, 0, 0};
                            if (r == 0) r = put_ext_uint(&ib, X_INNER, (uint64_t)(PyDict_GET_SIZE(wtab) - 1));
                            PyObject *ibb = r == 0 ? PyBytes_FromStringAndSize(ib.p, ib.n) : NULL;
                            PyMem_Free(ib.p);
                            if (r == 0 && (!ibb || PyList_SetItem(row, n, ibb) < 0)) r = FAIL;
                        } else if (r == 0) {
                            r = put(b, PyBytes_AS_STRING(m), PyBytes_GET_SIZE(m));
                        }
                    }
                }
                Py_ssize_t first = 0;
                if (r == 0 && ci->positioned) {
                    if (n < 3) r = DECLINE;
                    else {
                        Py_ssize_t lk = stab_get(stab, vals[0]);
                        if (lk >= 0) {
                            r = put_ext_uint(b, X_TAB, (uint64_t)lk);
                            first = 1;
                        }
                    }
                }
                for (Py_ssize_t i = n - 1; r == 0 && i >= first; i--)
                    r = spush(&st, check && i == ci->refslot ? K_REFS : K_VALUE, vals[i], check && i == ci->refslot ? self : 0);
                while (held) Py_DECREF(vals[--held]);
            }
        }
        Py_DECREF(v);
    }
done:
    while (st.n) Py_DECREF(st.e[--st.n].obj);
    PyMem_Free(st.e);
    for (Py_ssize_t i = 0; i < nrefs; i++) Py_DECREF(refs[i].seen);
    PyMem_Free(refs);
    Py_XDECREF(wtab);
    PyMem_Free(ids.keys);
    PyMem_Free(ids.vals);
    Py_XDECREF(mrows);
    return r;
}

static PyObject *fw_dumps(PyObject *self, PyObject *args) {
    PyObject *value;
    int check;
    if (!PyArg_ParseTuple(args, "Op", &value, &check)) return NULL;
    if (!g_cls) {
        PyErr_SetString(PyExc_RuntimeError, "_fastwrite is not configured");
        return NULL;
    }
    Buf b = {NULL, 0, 0};
    int r = encode(value, check, &b);
    PyObject *out = NULL;
    if (r == FAIL && !PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "_fastwrite failed without an error");
    if (r == 0) out = PyBytes_FromStringAndSize(b.p ? b.p : "", b.n);
    else if (r == DECLINE) {
        PyErr_Clear();
        out = Py_NewRef(g_declined);
    }
    PyMem_Free(b.p);
    return out;
}

/* configure(classes, declined, Regexp, PType, IncludedObject); classes: a tuple of (cls, getter, name,
 * wire_names, min, defaults, positioned, refslot, kinds), one per concrete AST class (xpp.pcore.write).
 * Once per process. */
static PyObject *fw_configure(PyObject *self, PyObject *args) {
    PyObject *classes, *declined, *regexp, *ptype, *included;
    if (!PyArg_ParseTuple(args, "O!OOOO", &PyTuple_Type, &classes, &declined, &regexp, &ptype, &included))
        return NULL;
    if (g_cls) {
        PyErr_SetString(PyExc_RuntimeError, "_fastwrite is already configured");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(classes);
    size_t cap = 64;
    while (cap < (size_t)n * 4) cap *= 2;
    Cls *cls = PyMem_Calloc((size_t)n + 1, sizeof(Cls));
    PyTypeObject **ctype = PyMem_Calloc(cap, sizeof(PyTypeObject *));
    Py_ssize_t *cidx = PyMem_Calloc(cap, sizeof(Py_ssize_t));
    if (!cls || !ctype || !cidx) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t, *getter, *name, *wire, *defaults, *kinds;
        Py_ssize_t min, refslot;
        int positioned;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(classes, i), "O!OUO!nO!pnO!", &PyType_Type, &t, &getter, &name,
                              &PyTuple_Type, &wire, &min, &PyTuple_Type, &defaults, &positioned, &refslot,
                              &PyTuple_Type, &kinds))
            goto fail;
        Cls *c = &cls[i];
        Py_ssize_t na = PyTuple_GET_SIZE(wire);
        if (na > MAX_ATTRS || PyTuple_GET_SIZE(defaults) != na || PyTuple_GET_SIZE(kinds) != na || min < 0 ||
            min > na || refslot < -1 || refslot >= na) {
            PyErr_SetString(PyExc_ValueError, "inconsistent class description");
            goto fail;
        }
        c->cls = (PyTypeObject *)t;
        c->getter = getter;
        c->name = name;
        c->nattr = na;
        c->min = min;
        c->refslot = refslot;
        c->positioned = positioned;
        PyObject *parts = PyUnicode_Split(name, s_sep, -1);
        c->segs = parts ? PyList_AsTuple(parts) : NULL;
        Py_XDECREF(parts);
        c->offsets = PyMem_Calloc((size_t)na + 1, sizeof(Py_ssize_t));
        c->defaults = PyMem_Calloc((size_t)na + 1, sizeof(PyObject *));
        c->kinds = PyMem_Calloc((size_t)na + 1, sizeof(Kind));
        if (!c->segs) goto fail;
        if (!c->offsets || !c->defaults || !c->kinds) {
            PyErr_NoMemory();
            goto fail;
        }
        for (Py_ssize_t a = 0; a < na; a++) {
            c->offsets[a] = slot_offset(c->cls, PyTuple_GET_ITEM(wire, a));
            c->defaults[a] = PyTuple_GET_ITEM(defaults, a);
            if (c->offsets[a] < 0 || parse_kind(PyTuple_GET_ITEM(kinds, a), &c->kinds[a]) < 0) goto fail;
        }
        size_t h = (size_t)(((uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ULL) & (cap - 1);
        while (ctype[h]) {
            if (ctype[h] == (PyTypeObject *)t) {
                PyErr_SetString(PyExc_ValueError, "a class described twice");
                goto fail;
            }
            h = (h + 1) & (cap - 1);
        }
        ctype[h] = (PyTypeObject *)t;
        cidx[h] = i;
    }
    g_classes = Py_NewRef(classes);
    g_cls = cls;
    g_ncls = n;
    g_ctype = ctype;
    g_cidx = cidx;
    g_cmask = cap - 1;
    g_ptype = Py_NewRef(ptype);
    g_included = Py_NewRef(included);
    g_declined = Py_NewRef(declined);
    g_regexp = Py_NewRef(regexp);
    Py_RETURN_NONE;
fail:
    /* (what was allocated for a description refused at configure time is not worth freeing: the
       process goes on with the Python writer) */
    PyMem_Free(ctype);
    PyMem_Free(cidx);
    return NULL;
}

static PyMethodDef methods[] = {
    {"dumps", fw_dumps, METH_VARARGS, "dumps(value, check) -> bytes, or the DECLINED object"},
    {"configure", fw_configure, METH_VARARGS, "configure(classes, declined, Regexp, PType, IncludedObject)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastwrite", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastwrite(void) {
    s_sep = PyUnicode_InternFromString("::");
    s_source = PyUnicode_InternFromString("source");
    s_name = PyUnicode_InternFromString("name");
    s_values = PyUnicode_InternFromString("values");
    s_type = PyUnicode_InternFromString("type");
    s_object_type = PyUnicode_InternFromString("Pcore::ObjectType");
    s_pcore = PyUnicode_InternFromString("Pcore::");
    if (!s_sep || !s_source || !s_name || !s_values || !s_type || !s_object_type || !s_pcore) return NULL;
    return PyModule_Create(&module);
}
