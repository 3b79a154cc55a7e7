/* What the C reader (xpp/_fastload.c) and the C writer (xpp/_fastwrite.c) both know of the AST classes:
 * where an attribute's value lies in an object (its __slots__ member's offset), and the type check of an
 * attribute: the kinds xpp.pcore.c.fast_kind computes from grammar.ast's Pcore types, as
 * (code, optional, arg, min_length, element).  Exact str, int and float: stricter than the Python
 * writer, which also admits their subclasses (what the C writer refuses it declines, and the Python
 * writer decides).  Included by each extension (static functions). */
#ifndef PUPPET_XPP_AST_CLASSES_H
#define PUPPET_XPP_AST_CLASSES_H

#include <Python.h>
#include <structmember.h>

enum { KIND_STR = 1, KIND_INT, KIND_FLOAT, KIND_BOOL, KIND_EXACT, KIND_ENUM, KIND_INSTANCE, KIND_LIST };

typedef struct Kind {
    int code;
    int optional;
    PyObject *arg;          /* KIND_EXACT / KIND_INSTANCE: a type; KIND_ENUM: a frozenset (borrowed) */
    Py_ssize_t minlen;      /* KIND_LIST */
    struct Kind *elem;      /* KIND_LIST */
} Kind;

/* 1: x passes the check, 0: it does not, -1: an error is set */
static int check_kind(const Kind *k, PyObject *x)
{
    if (k->optional && x == Py_None)
        return 1;
    switch (k->code) {
    case KIND_STR:
        return PyUnicode_CheckExact(x);
    case KIND_INT:
        return PyLong_CheckExact(x);
    case KIND_FLOAT:
        return PyFloat_CheckExact(x);
    case KIND_BOOL:
        return PyBool_Check(x);
    case KIND_EXACT:
        return Py_TYPE(x) == (PyTypeObject *)k->arg;
    case KIND_INSTANCE:
        return PyObject_TypeCheck(x, (PyTypeObject *)k->arg);
    case KIND_ENUM: {
        if (!PyUnicode_CheckExact(x))
            return 0;
        int c = PySet_Contains(k->arg, x);
        return c < 0 ? -1 : c;
    }
    case KIND_LIST: {
        if (!PyList_CheckExact(x))
            return 0;
        Py_ssize_t n = PyList_GET_SIZE(x);
        if (n < k->minlen)
            return 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            int c = check_kind(k->elem, PyList_GET_ITEM(x, i));
            if (c <= 0)
                return c;
        }
        return 1;
    }
    }
    return 0;
}

/* a kind tuple into *k; -1 with an error (a KIND_LIST's element kind is allocated) */
static int parse_kind(PyObject *t, Kind *k)
{
    /* (code, optional, arg, minlen, elem) */
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 5) {
        PyErr_SetString(PyExc_TypeError, "kind must be a 5-tuple");
        return -1;
    }
    k->code = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
    k->optional = PyObject_IsTrue(PyTuple_GET_ITEM(t, 1));
    k->arg = PyTuple_GET_ITEM(t, 2);
    k->minlen = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, 3));
    k->elem = NULL;
    if (PyErr_Occurred() || k->optional < 0)
        return -1;
    switch (k->code) {
    case KIND_STR: case KIND_INT: case KIND_FLOAT: case KIND_BOOL:
        break;
    case KIND_EXACT: case KIND_INSTANCE:
        if (!PyType_Check(k->arg)) {
            PyErr_SetString(PyExc_TypeError, "kind needs a type");
            return -1;
        }
        break;
    case KIND_ENUM:
        if (!PyFrozenSet_CheckExact(k->arg)) {
            PyErr_SetString(PyExc_TypeError, "enum kind needs a frozenset");
            return -1;
        }
        break;
    case KIND_LIST:
        k->elem = PyMem_Calloc(1, sizeof(Kind));
        if (k->elem == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        return parse_kind(PyTuple_GET_ITEM(t, 4), k->elem);
    default:
        PyErr_Format(PyExc_ValueError, "unknown kind %d", k->code);
        return -1;
    }
    return 0;
}

/* the offset of a writable object slot (a __slots__ member) of cls, or -1 with an error */
static Py_ssize_t slot_offset(PyTypeObject *cls, PyObject *attr)
{
    PyObject *d = PyObject_GetAttr((PyObject *)cls, attr);
    if (d == NULL)
        return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s.%U is not a __slots__ member", cls->tp_name, attr);
        Py_DECREF(d);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    Py_ssize_t off = m->offset;
    int ok = m->type == T_OBJECT_EX && !(m->flags & READONLY) &&
             PyType_IsSubtype(cls, PyDescr_TYPE(d)) && off > 0 && (size_t)off + sizeof(PyObject *) <= (size_t)cls->tp_basicsize;
    Py_DECREF(d);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s.%U is not a writable object slot", cls->tp_name, attr);
        return -1;
    }
    return off;
}

#endif
