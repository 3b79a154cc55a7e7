/* xpp._fastload: the Pcore msgpack reader of xpp/pcore/read.py, in C.
 *
 * It reads the same byte stream as ``xpp.pcore.loads(data, "msgpack")`` (a flat sequence of msgpack
 * primitives and Pcore extensions, two tabulation tables) and builds the same objects, without a token
 * list and without calling the AST classes' ``__init__``: a node is allocated with its class's
 * ``tp_alloc`` and its attribute values are stored at the offsets of the classes' ``__slots__`` member
 * descriptors.
 *
 * Nothing about the AST is written here.  ``configure()`` receives, from xpp/pcore/c.py at import time, what
 * grammar/ast.py's table gives for every concrete class: its Pcore name, the class, the attribute names in
 * wire order, the required count, the defaults, and a *kind* per attribute (the type check of the
 * attribute's Pcore type, see KIND_* in xpp/_ast_classes.h and ``fast_kind`` in xpp/pcore/c.py).
 *
 * ``load(data)`` returns the value, or the ``declined`` object given to configure() when the input is
 * malformed or anything unexpected happens (a Python exception inside, an unknown shape): the Python
 * reader then reads the same bytes and decides (the value, or its XppFormatError with its message).  So
 * this reader must never accept what the Python reader rejects, and must give an equal value (identity
 * of shared objects included) when both accept; tests/test_fastload_*.py check that differentially.
 * Exceptions other than ``Exception`` subclasses, and MemoryError, propagate.
 *
 * The reader is iterative (explicit frame and value stacks on the heap): nesting depth is bounded by the
 * input size only.  No buffer is sized from a count read from the input.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------- */
/* configuration (set once by configure())                                                           */

#include "_ast_classes.h"

typedef struct {
    PyTypeObject *cls;
    PyObject *name;         /* Pcore name */
    int nattr;
    int min;
    Py_ssize_t *offsets;
    PyObject **defaults;    /* NULL: required; a list: a new empty list per object */
    Kind *kinds;
    int is_locator;
    int locslot;            /* wire slot of the Locator attribute (-1: none) */
    int refslot;            /* wire slot of the reference list, e.g. Program.definitions (-1: none) */
} NodeInfo;

static PyObject *g_config = NULL;      /* keeps every borrowed reference below alive */
static NodeInfo *g_infos = NULL;
static int g_ninfos = 0;
static PyObject *g_by_name = NULL;     /* Pcore name -> index into g_infos */
static PyObject *g_declined = NULL;
static PyTypeObject *g_regexp = NULL;
static PyTypeObject *g_locator = NULL;
static PyTypeObject *g_ptype = NULL;
static PyObject *g_pobject = NULL;
static PyObject *g_object_params = NULL;
static PyObject *g_finish_pobject = NULL;
static PyObject *g_line_index = NULL;  /* (string, file) -> line index list */
static PyObject *g_pcore_prefix = NULL;
static PyObject *g_objecttype_name = NULL;
static PyObject *g_sep = NULL;
static PyObject *g_s_name = NULL, *g_s_values = NULL;

#define MAX_INT64 INT64_MAX

/* ------------------------------------------------------------------------------------------------- */
/* reader state                                                                                      */

enum { W_STR, W_NODE, W_PTYPE, W_OBJSTART, W_REGEXP };
typedef struct {
    int kind;
    int info;               /* W_NODE */
    Py_ssize_t count;       /* W_NODE / W_PTYPE: attribute count; W_OBJSTART: n */
    PyObject *obj;          /* W_STR: the str; W_PTYPE: the name; W_REGEXP: the source (owned) */
} WEntry;

enum { F_NODE, F_ARRAY, F_MAP, F_PTYPE, F_OTYPE, F_POBJ };
typedef struct {
    int kind;
    int info;
    Py_ssize_t left;        /* values still to come */
    Py_ssize_t count;       /* values in all (F_OTYPE: the OBJECT_START count) */
    Py_ssize_t base;        /* first value on the value stack */
    Py_ssize_t sidx;        /* serializer-table slot (-1: none) */
    Py_ssize_t refafter;    /* F_ARRAY of a reference attribute: elements must be TABULATIONs to slots
                               after this one (the node's own), each once; -1: an ordinary array */
    PyObject *obj;          /* F_PTYPE: name (borrowed from wtab); F_POBJ: the PObject (owned) */
    PyObject *names;        /* F_POBJ (owned) */
    PyObject *defaults;     /* F_POBJ (owned) */
} Frame;

typedef struct {
    const unsigned char *p, *end;
    WEntry *w; Py_ssize_t wn, wcap;
    PyObject **s; Py_ssize_t sn, scap;      /* NULL: an object still being read (a reference is a cycle) */
    unsigned char *sref; Py_ssize_t srcap;  /* per slot: already the target of a reference-list entry */
    PyObject **v; Py_ssize_t vn, vcap;
    Frame *f; Py_ssize_t fn, fcap;
    PyObject *result;
    Py_ssize_t budget;      /* work bound left, in characters (see work_budget in xpp/pcore/base.py) */
    int limited;            /* 0: no bound (load() without a budget) */
} Reader;

/* Charge n characters of work (a repeated string handed out, a line index computed). -1: over. */
static inline int charge(Reader *r, Py_ssize_t n)
{
    if (!r->limited)
        return 0;
    r->budget -= n;
    return r->budget < 0 ? -1 : 0;
}

#define GROW(ptr, n, cap, type)                                                         \
    do {                                                                                \
        if ((n) >= (cap)) {                                                             \
            Py_ssize_t nc_ = (cap) ? (cap) * 2 : 64;                                    \
            type *np_ = PyMem_Realloc((ptr), (size_t)nc_ * sizeof(type));               \
            if (np_ == NULL) { PyErr_NoMemory(); return -1; }                           \
            (ptr) = np_; (cap) = nc_;                                                   \
        }                                                                               \
    } while (0)

static int w_push(Reader *r, int kind, PyObject *obj, int info, Py_ssize_t count)
{
    GROW(r->w, r->wn, r->wcap, WEntry);
    WEntry *e = &r->w[r->wn++];
    e->kind = kind;
    e->obj = obj;       /* reference given */
    e->info = info;
    e->count = count;
    return 0;
}

static int s_push(Reader *r, PyObject *obj)   /* obj: borrowed (or NULL) */
{
    GROW(r->s, r->sn, r->scap, PyObject *);
    if (r->sn >= r->srcap) {
        unsigned char *np = PyMem_Realloc(r->sref, (size_t)r->scap);
        if (np == NULL) { PyErr_NoMemory(); return -1; }
        memset(np + r->srcap, 0, (size_t)(r->scap - r->srcap));
        r->sref = np; r->srcap = r->scap;
    }
    Py_XINCREF(obj);
    r->s[r->sn++] = obj;
    return 0;
}

static int v_push(Reader *r, PyObject *obj)   /* steals obj */
{
    if (r->vn >= r->vcap) {
        Py_ssize_t nc = r->vcap ? r->vcap * 2 : 256;
        PyObject **np = PyMem_Realloc(r->v, (size_t)nc * sizeof(PyObject *));
        if (np == NULL) { Py_DECREF(obj); PyErr_NoMemory(); return -1; }
        r->v = np; r->vcap = nc;
    }
    r->v[r->vn++] = obj;
    return 0;
}

static Frame *f_push(Reader *r, int kind, Py_ssize_t left)
{
    if (r->fn >= r->fcap) {
        Py_ssize_t nc = r->fcap ? r->fcap * 2 : 64;
        Frame *np = PyMem_Realloc(r->f, (size_t)nc * sizeof(Frame));
        if (np == NULL) { PyErr_NoMemory(); return NULL; }
        r->f = np; r->fcap = nc;
    }
    Frame *f = &r->f[r->fn++];
    f->kind = kind;
    f->info = -1;
    f->left = left;
    f->count = left;
    f->base = r->vn;
    f->sidx = -1;
    f->refafter = -1;
    f->obj = f->names = f->defaults = NULL;
    return f;
}

static void reader_free(Reader *r)
{
    Py_ssize_t i;
    for (i = 0; i < r->wn; i++)
        Py_XDECREF(r->w[i].obj);
    for (i = 0; i < r->sn; i++)
        Py_XDECREF(r->s[i]);
    for (i = 0; i < r->vn; i++)
        Py_XDECREF(r->v[i]);
    for (i = 0; i < r->fn; i++) {
        if (r->f[i].kind == F_POBJ) {
            Py_XDECREF(r->f[i].obj);
            Py_XDECREF(r->f[i].names);
            Py_XDECREF(r->f[i].defaults);
        }
    }
    PyMem_Free(r->w);
    PyMem_Free(r->s);
    PyMem_Free(r->sref);
    PyMem_Free(r->v);
    PyMem_Free(r->f);
    Py_XDECREF(r->result);
}

/* ------------------------------------------------------------------------------------------------- */
/* msgpack primitives                                                                                */

static inline uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline PyObject *decode_str(const unsigned char *s, Py_ssize_t n)
{
    /* what msgpack (raw=False, unicode_errors="surrogateescape") and bytes.decode give */
    if (n < 64) {
        /* ASCII fast path */
        Py_ssize_t i;
        unsigned char acc = 0;
        for (i = 0; i < n; i++)
            acc |= s[i];
        if (acc < 0x80) {
            PyObject *u = PyUnicode_New(n, 127);
            if (u == NULL)
                return NULL;
            memcpy(PyUnicode_DATA(u), s, (size_t)n);
            return u;
        }
    }
    return PyUnicode_DecodeUTF8((const char *)s, n, "surrogateescape");
}

/* A primitive inside an extension payload (xpp.pcore._mp_prims with in_payload=True). */
enum { PI_INT, PI_STR, PI_OTHER };
typedef struct {
    int t;
    int64_t i;
    const unsigned char *s;
    Py_ssize_t n;
} PItem;

/* 0: ok; -1: malformed (anything _mp_prims rejects, or an integer beyond int64, which it rejects too) */
static int payload_item(const unsigned char **pp, const unsigned char *end, PItem *it)
{
    const unsigned char *p = *pp;
    if (p >= end)
        return -1;
    unsigned int b = *p++;
    if (b < 0x80) {
        it->t = PI_INT; it->i = b;
    }
    else if (b >= 0xe0) {
        it->t = PI_INT; it->i = (int64_t)b - 256;
    }
    else if (b >= 0xa0 && b <= 0xbf) {
        Py_ssize_t n = b & 0x1f;
        if (end - p < n)
            return -1;
        it->t = PI_STR; it->s = p; it->n = n; p += n;
    }
    else if (b == 0xc0 || b == 0xc2 || b == 0xc3) {
        it->t = PI_OTHER;
    }
    else if (b >= 0xcc && b <= 0xd3) {
        static const int sizes[] = {1, 2, 4, 8, 1, 2, 4, 8};
        int size = sizes[b - 0xcc];
        if (end - p < size)
            return -1;
        uint64_t u = be(p, size);
        p += size;
        if (b <= 0xcf) {
            if (u > (uint64_t)MAX_INT64)
                return -1;
            it->i = (int64_t)u;
        }
        else {
            int bits = size * 8;
            int64_t v;
            if (bits == 64)
                v = (int64_t)u;
            else if (u & ((uint64_t)1 << (bits - 1)))
                v = (int64_t)(u | (~(uint64_t)0 << bits));
            else
                v = (int64_t)u;
            it->i = v;
        }
        it->t = PI_INT;
    }
    else if (b == 0xcb) {
        if (end - p < 8)
            return -1;
        p += 8; it->t = PI_OTHER;
    }
    else if (b == 0xca) {
        if (end - p < 4)
            return -1;
        p += 4; it->t = PI_OTHER;
    }
    else if (b >= 0xd9 && b <= 0xdb) {
        static const int sizes[] = {1, 2, 4};
        int size = sizes[b - 0xd9];
        if (end - p < size)
            return -1;
        uint64_t n = be(p, size);
        p += size;
        if ((uint64_t)(end - p) < n)
            return -1;
        it->t = PI_STR; it->s = p; it->n = (Py_ssize_t)n; p += n;
    }
    else {
        return -1;      /* extension in a payload, native array/map, bin, 0xc1 */
    }
    *pp = p;
    return 0;
}


/* ------------------------------------------------------------------------------------------------- */
/* building values                                                                                   */

static PyObject *finish_node(Reader *r, Frame *f)
{
    NodeInfo *ni = &g_infos[f->info];
    PyObject **vals = r->v + f->base;
    Py_ssize_t n = f->count, i;
    for (i = 0; i < n; i++) {
        int c = check_kind(&ni->kinds[i], vals[i]);
        if (c <= 0)
            return NULL;
    }
    PyObject *o = ni->cls->tp_alloc(ni->cls, 0);
    if (o == NULL)
        return NULL;
    for (i = 0; i < n; i++)         /* the references move from the value stack into the slots */
        *(PyObject **)((char *)o + ni->offsets[i]) = vals[i];
    r->vn = f->base;
    for (; i < ni->nattr; i++) {
        PyObject *d = ni->defaults[i];
        PyObject *dv;
        if (PyList_CheckExact(d))
            dv = PyList_New(0);
        else {
            dv = d;
            Py_INCREF(dv);
        }
        if (dv == NULL) {
            Py_DECREF(o);
            return NULL;
        }
        *(PyObject **)((char *)o + ni->offsets[i]) = dv;
    }
    if (ni->is_locator) {
        PyObject **li = (PyObject **)((char *)o + ni->offsets[2]);
        if (*li == Py_None) {
            PyObject *str = *(PyObject **)((char *)o + ni->offsets[0]);
            if (charge(r, PyUnicode_Check(str) ? PyUnicode_GET_LENGTH(str) : 0) < 0) {
                Py_DECREF(o);
                return NULL;
            }
            PyObject *x = PyObject_CallFunctionObjArgs(g_line_index,
                                                       *(PyObject **)((char *)o + ni->offsets[0]),
                                                       *(PyObject **)((char *)o + ni->offsets[1]), NULL);
            if (x == NULL) {
                Py_DECREF(o);
                return NULL;
            }
            Py_SETREF(*li, x);
        }
    }
    return o;
}

static PyObject *finish_list(Reader *r, Frame *f)
{
    PyObject *l = PyList_New(f->count);
    if (l == NULL)
        return NULL;
    PyObject **vals = r->v + f->base;
    for (Py_ssize_t i = 0; i < f->count; i++)
        PyList_SET_ITEM(l, i, vals[i]);
    r->vn = f->base;
    return l;
}

static PyObject *finish_map(Reader *r, Frame *f)
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    PyObject **vals = r->v + f->base;
    for (Py_ssize_t i = 0; i < f->count; i += 2) {
        if (PyDict_SetItem(d, vals[i], vals[i + 1]) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < f->count; i++)
        Py_DECREF(vals[i]);
    r->vn = f->base;
    return d;
}

static PyObject *new_ptype(PyObject *name, PyObject *values)   /* values: stolen */
{
    PyObject *o = PyObject_CallOneArg((PyObject *)g_ptype, name);
    if (o == NULL) {
        Py_DECREF(values);
        return NULL;
    }
    int rc = PyObject_SetAttr(o, g_s_values, values);
    Py_DECREF(values);
    if (rc < 0) {
        Py_DECREF(o);
        return NULL;
    }
    return o;
}

static PyObject *call_finish_pobject(PyObject *obj, PyObject *vals, PyObject *names, PyObject *defaults)
{
    PyObject *x = PyObject_CallFunctionObjArgs(g_finish_pobject, obj, vals, names, defaults, NULL);
    if (x == NULL)
        return NULL;
    Py_DECREF(x);
    Py_INCREF(obj);
    return obj;
}

static int set_stab(Reader *r, Py_ssize_t k, PyObject *v)
{
    if (k >= 0) {
        Py_INCREF(v);
        r->s[k] = v;
    }
    return 0;
}

/* The type value of an included object has arrived: open the object (frame F_OTYPE replaced).
 * Returns 1 when a frame was pushed (values to come), 0 when the object is complete (*out), -1: fail. */
static int open_pobject(Reader *r, Py_ssize_t n, PyObject *tv, PyObject **out)
{
    int ret = -1;
    PyObject *name = NULL, *values = NULL, *params = NULL, *obj = NULL, *empty = NULL;
    if (!PyObject_TypeCheck(tv, g_ptype))
        return -1;
    name = PyObject_GetAttr(tv, g_s_name);
    if (name == NULL)
        goto done;
    int eq = PyObject_RichCompareBool(name, g_objecttype_name, Py_EQ);
    if (eq <= 0)
        goto done;
    values = PyObject_GetAttr(tv, g_s_values);
    if (values == NULL || PyObject_Length(values) != 1)
        goto done;
    PyObject *init_hash = PySequence_GetItem(values, 0);
    if (init_hash == NULL)
        goto done;
    params = PyObject_CallOneArg(g_object_params, init_hash);
    if (params == NULL || !PyTuple_CheckExact(params) || PyTuple_GET_SIZE(params) != 3) {
        Py_DECREF(init_hash);
        goto done;
    }
    PyObject *names = PyTuple_GET_ITEM(params, 0);
    Py_ssize_t required = PyLong_AsSsize_t(PyTuple_GET_ITEM(params, 1));
    PyObject *defaults = PyTuple_GET_ITEM(params, 2);
    Py_ssize_t nnames = PyObject_Length(names);
    Py_ssize_t m = n - 1;
    if (required < 0 || nnames < 0 || !(required <= m && m <= nnames)) {
        Py_DECREF(init_hash);
        goto done;
    }
    PyObject *tname = PyObject_GetItem(init_hash, g_s_name);
    if (tname == NULL) {
        Py_DECREF(init_hash);
        goto done;
    }
    empty = PyDict_New();
    if (empty == NULL) {
        Py_DECREF(tname);
        Py_DECREF(init_hash);
        goto done;
    }
    obj = PyObject_CallFunctionObjArgs(g_pobject, tname, empty, init_hash, NULL);
    Py_DECREF(tname);
    Py_DECREF(init_hash);
    if (obj == NULL)
        goto done;
    if (m == 0) {
        PyObject *vals = PyList_New(0);
        if (vals == NULL)
            goto done;
        *out = call_finish_pobject(obj, vals, names, defaults);
        Py_DECREF(vals);
        if (*out == NULL)
            goto done;
        if (s_push(r, *out) < 0) {
            Py_CLEAR(*out);
            goto done;
        }
        ret = 0;
        goto done;
    }
    if (s_push(r, NULL) < 0)
        goto done;
    Frame *f = f_push(r, F_POBJ, m);
    if (f == NULL)
        goto done;
    f->sidx = r->sn - 1;
    f->obj = obj; obj = NULL;
    Py_INCREF(names);
    f->names = names;
    Py_INCREF(defaults);
    f->defaults = defaults;
    ret = 1;
done:
    Py_XDECREF(name);
    Py_XDECREF(values);
    Py_XDECREF(params);
    Py_XDECREF(obj);
    Py_XDECREF(empty);
    return ret;
}

/* Give value v (stolen) to the innermost open container, closing every container it completes. */
static int deliver(Reader *r, PyObject *v)
{
    for (;;) {
        if (r->fn == 0) {
            if (r->result != NULL) {        /* trailing data after the value */
                Py_DECREF(v);
                return -1;
            }
            r->result = v;
            return 0;
        }
        Frame *f = &r->f[r->fn - 1];
        if (f->kind == F_OTYPE) {
            Py_ssize_t n = f->count;
            r->fn--;
            PyObject *obj = NULL;
            int rc = open_pobject(r, n, v, &obj);
            Py_DECREF(v);
            if (rc < 0)
                return -1;
            if (rc == 1)
                return 0;
            v = obj;
            continue;
        }
        if (v_push(r, v) < 0)
            return -1;
        if (--f->left > 0)
            return 0;
        Frame fr = *f;
        r->fn--;
        switch (fr.kind) {
        case F_NODE:
            v = finish_node(r, &fr);
            break;
        case F_ARRAY:
            v = finish_list(r, &fr);
            break;
        case F_MAP:
            v = finish_map(r, &fr);
            break;
        case F_PTYPE: {
            PyObject *l = finish_list(r, &fr);
            v = l ? new_ptype(fr.obj, l) : NULL;
            break;
        }
        case F_POBJ: {
            PyObject *l = finish_list(r, &fr);
            v = l ? call_finish_pobject(fr.obj, l, fr.names, fr.defaults) : NULL;
            Py_XDECREF(l);
            Py_DECREF(fr.obj);
            Py_DECREF(fr.names);
            Py_DECREF(fr.defaults);
            break;
        }
        default:
            v = NULL;
        }
        if (v == NULL)
            return -1;
        set_stab(r, fr.sidx, v);
    }
}

/* Open an object of a resolved PCORE_OBJECT_START marker (wtab entry e). */
static int open_marker(Reader *r, const WEntry *e)
{
    if (e->kind == W_NODE) {
        if (s_push(r, NULL) < 0)
            return -1;
        if (e->count == 0) {
            Frame fr;
            fr.kind = F_NODE; fr.info = e->info; fr.count = 0; fr.base = r->vn; fr.sidx = r->sn - 1;
            PyObject *v = finish_node(r, &fr);
            if (v == NULL)
                return -1;
            set_stab(r, fr.sidx, v);
            return deliver(r, v);
        }
        Frame *f = f_push(r, F_NODE, e->count);
        if (f == NULL)
            return -1;
        f->info = e->info;
        f->sidx = r->sn - 1;
        return 0;
    }
    /* W_PTYPE */
    if (s_push(r, NULL) < 0)
        return -1;
    if (e->count == 0) {
        PyObject *l = PyList_New(0);
        PyObject *v = l ? new_ptype(e->obj, l) : NULL;
        if (v == NULL)
            return -1;
        set_stab(r, r->sn - 1, v);
        return deliver(r, v);
    }
    Frame *f = f_push(r, F_PTYPE, e->count);
    if (f == NULL)
        return -1;
    f->obj = e->obj;
    f->sidx = r->sn - 1;
    return 0;
}

static int open_objstart(Reader *r, Py_ssize_t n)
{
    Frame *f = f_push(r, F_OTYPE, 1);
    if (f == NULL)
        return -1;
    f->count = n;
    return 0;
}

static int new_regexp(Reader *r, PyObject *src)
{
    PyObject *v = PyObject_CallOneArg((PyObject *)g_regexp, src);
    if (v == NULL || s_push(r, v) < 0) {
        Py_XDECREF(v);
        return -1;
    }
    return deliver(r, v);
}

/* PCORE_OBJECT_START payload p..end, first occurrence: resolve the name, add the marker to wtab, open. */
static int fresh_marker(Reader *r, const unsigned char *p, const unsigned char *end)
{
    PItem it;
    if (payload_item(&p, end, &it) < 0 || it.t != PI_INT || it.i < 1)
        return -1;
    int64_t nseg = it.i;
    if (nseg > end - p)
        return -1;
    PyObject *segs = PyList_New(0);
    if (segs == NULL)
        return -1;
    for (int64_t k = 0; k < nseg; k++) {
        if (payload_item(&p, end, &it) < 0)
            goto fail;
        if (it.t == PI_INT) {
            if (it.i < 0 || it.i >= r->wn || r->w[it.i].kind != W_STR)
                goto fail;
            if (PyList_Append(segs, r->w[it.i].obj) < 0)
                goto fail;
        }
        else if (it.t == PI_STR) {
            PyObject *s = decode_str(it.s, it.n);
            if (s == NULL)
                goto fail;
            if (PyList_Append(segs, s) < 0 || w_push(r, W_STR, s, 0, 0) < 0) {
                Py_DECREF(s);
                goto fail;
            }
        }
        else
            goto fail;
    }
    if (payload_item(&p, end, &it) < 0 || it.t != PI_INT || it.i < 0 || p != end)
        goto fail;
    int64_t count = it.i;
    PyObject *name = PyUnicode_Join(g_sep, segs);
    Py_DECREF(segs);
    segs = NULL;
    if (name == NULL)
        return -1;
    PyObject *idx = PyDict_GetItemWithError(g_by_name, name);
    if (idx != NULL) {
        int info = (int)PyLong_AsLong(idx);
        NodeInfo *ni = &g_infos[info];
        Py_DECREF(name);
        if (count < ni->min || count > ni->nattr)
            return -1;
        if (w_push(r, W_NODE, NULL, info, (Py_ssize_t)count) < 0)
            return -1;
    }
    else {
        if (PyErr_Occurred()) {
            Py_DECREF(name);
            return -1;
        }
        int pre = (int)PyUnicode_Tailmatch(name, g_pcore_prefix, 0, PY_SSIZE_T_MAX, -1);
        if (pre <= 0 || count > PY_SSIZE_T_MAX / 2) {
            Py_DECREF(name);
            return -1;
        }
        if (w_push(r, W_PTYPE, name, 0, (Py_ssize_t)count) < 0) {
            Py_DECREF(name);
            return -1;
        }
    }
    WEntry e = r->w[r->wn - 1];
    return open_marker(r, &e);
fail:
    Py_XDECREF(segs);
    return -1;
}

/* One extension: code, payload p..end. */
static int extension(Reader *r, int code, const unsigned char *p, const unsigned char *end)
{
    PItem it;
    switch (code) {
    case 0x00: case 0x01: case 0x10: case 0x11: case 0x13: {
        if (payload_item(&p, end, &it) < 0 || it.t != PI_INT || it.i < 0 || p != end)
            return -1;
        int64_t k = it.i;
        if (code == 0x00) {                 /* INNER_TABULATION */
            if (k >= r->wn)
                return -1;
            WEntry e = r->w[k];
            switch (e.kind) {
            case W_STR:
                if (charge(r, PyUnicode_GET_LENGTH(e.obj)) < 0)
                    return -1;
                Py_INCREF(e.obj);
                return deliver(r, e.obj);
            case W_NODE:
            case W_PTYPE:
                return open_marker(r, &e);
            case W_OBJSTART:
                return open_objstart(r, e.count);
            case W_REGEXP:
                return new_regexp(r, e.obj);
            }
            return -1;
        }
        if (code == 0x01) {                 /* TABULATION */
            if (k >= r->sn || r->s[k] == NULL || r->fn == 0)
                return -1;
            /* only where Puppet's model shares an object (else the tree becomes a DAG): a node's
             * Locator attribute, or an entry of a reference list (Program.definitions) */
            Frame *top = &r->f[r->fn - 1];
            if (top->kind == F_NODE) {
                NodeInfo *ni = &g_infos[top->info];
                if (ni->locslot != top->count - top->left || Py_TYPE(r->s[k]) != g_locator)
                    return -1;
            }
            else if (top->kind == F_ARRAY && top->refafter >= 0) {
                if (k <= top->refafter || r->sref[k])
                    return -1;
                r->sref[k] = 1;
            }
            else
                return -1;
            Py_INCREF(r->s[k]);
            return deliver(r, r->s[k]);
        }
        if (code == 0x10 || code == 0x11) { /* ARRAY_START / MAP_START */
            if (k > (int64_t)(PY_SSIZE_T_MAX / 4))
                return -1;
            if (k == 0) {
                PyObject *v = code == 0x10 ? PyList_New(0) : PyDict_New();
                if (v == NULL || s_push(r, v) < 0) {
                    Py_XDECREF(v);
                    return -1;
                }
                return deliver(r, v);
            }
            if (s_push(r, NULL) < 0)
                return -1;
            Py_ssize_t refafter = -1;
            if (code == 0x10 && r->fn > 0) {
                Frame *top = &r->f[r->fn - 1];
                if (top->kind == F_NODE && g_infos[top->info].refslot == top->count - top->left)
                    refafter = top->sidx;
            }
            Frame *f = f_push(r, code == 0x10 ? F_ARRAY : F_MAP, code == 0x10 ? (Py_ssize_t)k : 2 * (Py_ssize_t)k);
            if (f == NULL)
                return -1;
            f->sidx = r->sn - 1;
            f->refafter = refafter;
            return 0;
        }
        /* OBJECT_START */
        if (k < 1 || k > (int64_t)(PY_SSIZE_T_MAX / 4))
            return -1;
        if (w_push(r, W_OBJSTART, NULL, 0, (Py_ssize_t)k) < 0)
            return -1;
        return open_objstart(r, (Py_ssize_t)k);
    }
    case 0x12:
        return fresh_marker(r, p, end);
    case 0x30: {                            /* REGEXP */
        if (payload_item(&p, end, &it) < 0 || it.t != PI_STR || p != end)
            return -1;
        PyObject *src = decode_str(it.s, it.n);
        if (src == NULL)
            return -1;
        if (w_push(r, W_REGEXP, src, 0, 0) < 0) {
            Py_DECREF(src);
            return -1;
        }
        return new_regexp(r, src);
    }
    }
    return -1;
}

static int read_all(Reader *r)
{
    const unsigned char *p = r->p, *end = r->end;
    while (p < end) {
        unsigned int b = *p++;
        PyObject *v;
        if (b < 0x80) {
            v = PyLong_FromLong((long)b);
        }
        else if (b >= 0xe0) {
            v = PyLong_FromLong((long)b - 256);
        }
        else if (b >= 0xa0 && b <= 0xbf) {
            Py_ssize_t n = b & 0x1f;
            if (end - p < n)
                return -1;
            v = decode_str(p, n);
            p += n;
            if (v == NULL)
                return -1;
            if (w_push(r, W_STR, v, 0, 0) < 0) {
                Py_DECREF(v);
                return -1;
            }
            Py_INCREF(v);
        }
        else if (b >= 0xd4 && b <= 0xd8) {
            static const int sizes[] = {1, 2, 4, 8, 16};
            Py_ssize_t n = sizes[b - 0xd4];
            if (end - p < n + 1)
                return -1;
            int code = (signed char)p[0];
            p += 1;
            const unsigned char *pe = p + n;
            if (extension(r, code, p, pe) < 0)
                return -1;
            p = pe;
            continue;
        }
        else if (b >= 0xc7 && b <= 0xc9) {
            static const int sizes[] = {1, 2, 4};
            int size = sizes[b - 0xc7];
            if (end - p < size)
                return -1;
            uint64_t n = be(p, size);
            p += size;
            if ((uint64_t)(end - p) < n + 1)
                return -1;
            int code = (signed char)p[0];
            p += 1;
            const unsigned char *pe = p + n;
            if (extension(r, code, p, pe) < 0)
                return -1;
            p = pe;
            continue;
        }
        else if (b == 0xc0) {
            v = Py_None;
            Py_INCREF(v);
        }
        else if (b == 0xc2 || b == 0xc3) {
            v = b == 0xc3 ? Py_True : Py_False;
            Py_INCREF(v);
        }
        else if (b >= 0xcc && b <= 0xd3) {
            static const int sizes[] = {1, 2, 4, 8, 1, 2, 4, 8};
            int size = sizes[b - 0xcc];
            if (end - p < size)
                return -1;
            uint64_t u = be(p, size);
            p += size;
            int64_t x;
            if (b <= 0xcf) {
                if (u > (uint64_t)MAX_INT64)
                    return -1;
                x = (int64_t)u;
            }
            else {
                int bits = size * 8;
                if (bits < 64 && (u & ((uint64_t)1 << (bits - 1))))
                    x = (int64_t)(u | (~(uint64_t)0 << bits));
                else
                    x = (int64_t)u;
            }
            v = PyLong_FromLongLong(x);
        }
        else if (b == 0xcb) {
            if (end - p < 8)
                return -1;
            double d = PyFloat_Unpack8((const char *)p, 0);
            if (d == -1.0 && PyErr_Occurred())
                return -1;
            p += 8;
            v = PyFloat_FromDouble(d);
        }
        else if (b == 0xca) {
            if (end - p < 4)
                return -1;
            double d = PyFloat_Unpack4((const char *)p, 0);
            if (d == -1.0 && PyErr_Occurred())
                return -1;
            p += 4;
            v = PyFloat_FromDouble(d);
        }
        else if (b >= 0xd9 && b <= 0xdb) {
            static const int sizes[] = {1, 2, 4};
            int size = sizes[b - 0xd9];
            if (end - p < size)
                return -1;
            uint64_t n = be(p, size);
            p += size;
            if ((uint64_t)(end - p) < n)
                return -1;
            v = decode_str(p, (Py_ssize_t)n);
            p += n;
            if (v == NULL)
                return -1;
            if (w_push(r, W_STR, v, 0, 0) < 0) {
                Py_DECREF(v);
                return -1;
            }
            Py_INCREF(v);
        }
        else {
            return -1;      /* native arrays and maps, bin, 0xc1 */
        }
        if (v == NULL)
            return -1;
        if (deliver(r, v) < 0)
            return -1;
    }
    if (r->fn != 0 || r->result == NULL)
        return -1;
    return 0;
}

/* On failure: a Python error that is an Exception (other than MemoryError) is cleared and the caller
 * declines; others propagate. */
static PyObject *declined_or_error(void)
{
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(PyExc_MemoryError))
            return NULL;
        PyErr_Clear();
    }
    Py_INCREF(g_declined);
    return g_declined;
}

static PyObject *fl_load(PyObject *self, PyObject *args)
{
    PyObject *arg;
    Py_ssize_t budget = -1;
    if (!PyArg_ParseTuple(args, "O|n:load", &arg, &budget))
        return NULL;
    if (g_infos == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "puppet_xpp.xpp._fastload is not configured");
        return NULL;
    }
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0)
        return declined_or_error();     /* not bytes-like: the Python reader says what it makes of it */
    Reader r;
    memset(&r, 0, sizeof r);
    r.p = buf.buf;
    r.end = (const unsigned char *)buf.buf + buf.len;
    r.budget = budget;
    r.limited = budget >= 0;
    PyObject *res;
    if (read_all(&r) == 0) {
        res = r.result;
        r.result = NULL;
    }
    else
        res = declined_or_error();
    reader_free(&r);
    PyBuffer_Release(&buf);
    return res;
}

/* ------------------------------------------------------------------------------------------------- */
/* configuration                                                                                     */


/* configure(classes, by_name, declined, Regexp, PType, PObject, object_params, finish_pobject, line_index)
 * classes: a tuple of (pcore_name, cls, wire_names, min, defaults, kinds, is_locator, locslot, refslot);
 * defaults holds None for required attributes (they are never defaulted: min covers them); locslot and
 * refslot: the wire slots of the Locator attribute and of the reference list (-1: none). */
static PyObject *fl_configure(PyObject *self, PyObject *args)
{
    PyObject *classes, *by_name, *declined, *regexp, *ptype, *pobject, *object_params, *finish_pobject, *line_index;
    if (!PyArg_ParseTuple(args, "O!O!OO!O!OOOO:configure", &PyTuple_Type, &classes, &PyDict_Type, &by_name,
                          &declined, &PyType_Type, &regexp, &PyType_Type, &ptype, &pobject, &object_params,
                          &finish_pobject, &line_index))
        return NULL;
    if (g_config != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "puppet_xpp.xpp._fastload is already configured");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(classes);
    NodeInfo *infos = PyMem_Calloc((size_t)n + 1, sizeof(NodeInfo));
    PyTypeObject *locator = NULL;
    if (infos == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *c = PyTuple_GET_ITEM(classes, i);
        PyObject *pname, *cls, *wire, *defaults, *kinds;
        int min, is_locator, locslot, refslot;
        if (!PyArg_ParseTuple(c, "UO!O!iO!O!pii", &pname, &PyType_Type, &cls, &PyTuple_Type, &wire, &min,
                              &PyTuple_Type, &defaults, &PyTuple_Type, &kinds, &is_locator, &locslot,
                              &refslot))
            goto fail;
        NodeInfo *ni = &infos[i];
        Py_ssize_t na = PyTuple_GET_SIZE(wire);
        if (PyTuple_GET_SIZE(defaults) != na || PyTuple_GET_SIZE(kinds) != na || min < 0 || min > na ||
            (is_locator && na < 3) || locslot < -1 || locslot >= na || refslot < -1 || refslot >= na) {
            PyErr_SetString(PyExc_ValueError, "inconsistent class description");
            goto fail;
        }
        ni->cls = (PyTypeObject *)cls;
        ni->name = pname;
        ni->nattr = (int)na;
        ni->min = min;
        ni->is_locator = is_locator;
        ni->locslot = locslot;
        ni->refslot = refslot;
        if (is_locator)
            locator = (PyTypeObject *)cls;
        ni->offsets = PyMem_Calloc((size_t)na + 1, sizeof(Py_ssize_t));
        ni->defaults = PyMem_Calloc((size_t)na + 1, sizeof(PyObject *));
        ni->kinds = PyMem_Calloc((size_t)na + 1, sizeof(Kind));
        if (ni->offsets == NULL || ni->defaults == NULL || ni->kinds == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        for (Py_ssize_t a = 0; a < na; a++) {
            ni->offsets[a] = slot_offset(ni->cls, PyTuple_GET_ITEM(wire, a));
            if (ni->offsets[a] < 0)
                goto fail;
            ni->defaults[a] = a < min ? NULL : PyTuple_GET_ITEM(defaults, a);
            if (parse_kind(PyTuple_GET_ITEM(kinds, a), &ni->kinds[a]) < 0)
                goto fail;
        }
        if (ni->cls->tp_alloc == NULL) {
            PyErr_SetString(PyExc_TypeError, "class without tp_alloc");
            goto fail;
        }
    }
    if (locator == NULL) {
        PyErr_SetString(PyExc_ValueError, "no Locator class");
        goto fail;
    }
    g_config = Py_BuildValue("(OOOOOOOOO)", classes, by_name, declined, regexp, ptype, pobject,
                             object_params, finish_pobject, line_index);
    if (g_config == NULL)
        goto fail;
    g_infos = infos;
    g_ninfos = (int)n;
    g_by_name = by_name;
    g_declined = declined;
    g_regexp = (PyTypeObject *)regexp;
    g_locator = locator;
    g_ptype = (PyTypeObject *)ptype;
    g_pobject = pobject;
    g_object_params = object_params;
    g_finish_pobject = finish_pobject;
    g_line_index = line_index;
    Py_RETURN_NONE;
fail:
    /* the Kind trees of a failed configuration are leaked (configure fails only on a broken table) */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyMem_Free(infos[i].offsets);
        PyMem_Free(infos[i].defaults);
        PyMem_Free(infos[i].kinds);
    }
    PyMem_Free(infos);
    return NULL;
}

/* check(pcore_name, index, value) -> bool: the type check of attribute ``index`` (wire order) of a
 * class, as load() applies it (for tests). */
static PyObject *fl_check(PyObject *self, PyObject *args)
{
    PyObject *name, *value;
    int k;
    if (!PyArg_ParseTuple(args, "UiO:check", &name, &k, &value))
        return NULL;
    if (g_infos == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "puppet_xpp.xpp._fastload is not configured");
        return NULL;
    }
    PyObject *idx = PyDict_GetItemWithError(g_by_name, name);
    if (idx == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, name);
        return NULL;
    }
    NodeInfo *ni = &g_infos[PyLong_AsLong(idx)];
    if (k < 0 || k >= ni->nattr) {
        PyErr_SetString(PyExc_IndexError, "attribute index out of range");
        return NULL;
    }
    int c = check_kind(&ni->kinds[k], value);
    if (c < 0)
        return NULL;
    return PyBool_FromLong(c);
}

static PyMethodDef fl_methods[] = {
    {"configure", fl_configure, METH_VARARGS,
     "configure(classes, by_name, declined, Regexp, PType, PObject, object_params, finish_pobject, "
     "line_index): the AST description (from xpp.pcore)."},
    {"load", fl_load, METH_VARARGS,
     "load(data, budget=-1) -> the value of a Pcore msgpack stream, or the 'declined' object (malformed, "
     "unsupported, or beyond the work budget in characters (-1: none): the Python reader decides)."},
    {"check", fl_check, METH_VARARGS, "check(pcore_name, index, value) -> bool (attribute type check)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fl_module = {
    PyModuleDef_HEAD_INIT, "puppet_xpp.xpp._fastload",
    "C reader for Pcore msgpack streams of Puppet ASTs (optional accelerator of xpp.pcore.loads).",
    -1, fl_methods,
};

PyMODINIT_FUNC PyInit__fastload(void)
{
    g_pcore_prefix = PyUnicode_InternFromString("Pcore::");
    g_objecttype_name = PyUnicode_InternFromString("Pcore::ObjectType");
    g_sep = PyUnicode_InternFromString("::");
    g_s_name = PyUnicode_InternFromString("name");
    g_s_values = PyUnicode_InternFromString("values");
    if (!g_pcore_prefix || !g_objecttype_name || !g_sep || !g_s_name || !g_s_values)
        return NULL;
    return PyModule_Create(&fl_module);
}
