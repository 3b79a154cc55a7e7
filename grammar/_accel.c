/* grammar._accel: the LR driver loop of grammar/parser.py (Driver.run without a ``watch``), in C.
 *
 * Nothing about the grammar is written here.  grammar/parser.py builds a Machine once per Builder class
 * from lark's LALR(1) tables (dense int arrays: actions per state and terminal, gotos per state and
 * nonterminal, racc's default and only reductions per state) and the rules (size, nonterminal, whether
 * the action just passes its one value on, the Python function of the action).
 *
 * ``Machine.run`` does what the Python loop does for a run without a watch: read each token's ``type``,
 * shift, reduce (calling ``function(builder, children)`` for every rule whose action is not a plain pass),
 * until the input is accepted, a syntax error is met (a token with no action and no default reduction,
 * or more than 1000 default reductions in a row), or the stack grows past ``max_stack``.  The LR stack is
 * an int array while it runs and is written back into the caller's list on every return (errors
 * included); the values stay in the caller's list.  Error recovery, salvage and the incremental parser's
 * watched runs stay in Python: the caller continues from the configuration left here.
 *
 * Results: ``(0, value, i)`` accepted; ``(1, None, i)`` syntax error at token i; ``(2, None, i)`` stack
 * too deep after shifting token i - 1.  An exception raised by an action propagates (stack written back).
 *
 * ``walk`` is the validator's walk (grammar/validator/walk.py Walker._visit): the same calls of the
 * checks in the same order.
 *
 * ``scan`` is the lexer's main loop (grammar/lexer.py Engine.code) for the frequent tokens of plain code
 * (positions are character indices, as the Python loop's before Engine.finish): blanks and comments, variables, operators, words and keywords, class references,
 * brackets, braces and parentheses, single-quoted strings, double-quoted strings without escapes or
 * interpolation, decimal integers.  It appends the same Token objects the Python loop makes and stops, at
 * the start of the first token it does not handle (heredocs, regexes, other strings and numbers, errors,
 * the end of the text...), for the Python loop to lex that one; grammar/lexer.py calls it again after.
 * Which token a text starts with is the master regular expression's rule (its alternatives in order),
 * restated here for the cases handled.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NOACT INT_MIN

typedef struct {
    PyObject_HEAD
    int nstates, nterms, nnonterms, nrules;
    int *actions;       /* nstates * nterms */
    int *gotos;         /* nstates * nnonterms */
    int *default_reduce;/* nstates */
    int *only_reduce;   /* nstates */
    int *sizes;         /* nrules */
    int *origins;       /* nrules */
    char *unit;         /* nrules */
    char *watched;      /* nrules: 1 a statement list grew, 2 a list is complete (Driver.run's watch) */
    int lbrace;         /* the terminal index of LBRACE (-1: none) */
    int end_state;
    PyObject *term_ids;   /* dict: token type -> terminal index */
    PyObject *callbacks;  /* tuple of nrules functions */
    PyObject *states;     /* tuple of nstates ints (the stack's values, written back) */
} Machine;

static PyObject *s_type = NULL;

static void Machine_dealloc(Machine *m) {
    free(m->actions);
    free(m->gotos);
    free(m->default_reduce);
    free(m->only_reduce);
    free(m->sizes);
    free(m->origins);
    free(m->unit);
    free(m->watched);
    Py_XDECREF(m->term_ids);
    Py_XDECREF(m->callbacks);
    Py_XDECREF(m->states);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

/* a sequence of ints into a new malloc'd array of exactly n ints (-1 and an exception otherwise);
 * None items become NOACT */
static int *int_array(PyObject *seq, Py_ssize_t n, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL)
        return NULL;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items", what, n);
        Py_DECREF(fast);
        return NULL;
    }
    int *a = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (a == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = PySequence_Fast_GET_ITEM(fast, k);
        if (x == Py_None) {
            a[k] = NOACT;
            continue;
        }
        long v = PyLong_AsLong(x);
        if (v == -1 && PyErr_Occurred()) {
            free(a);
            Py_DECREF(fast);
            return NULL;
        }
        if (v <= INT_MIN || v > INT_MAX) {
            PyErr_Format(PyExc_ValueError, "%s: %ld out of range", what, v);
            free(a);
            Py_DECREF(fast);
            return NULL;
        }
        a[k] = (int)v;
    }
    Py_DECREF(fast);
    return a;
}

/* a sequence of n ints from 0 to max into a new malloc'd char array (NULL and an exception otherwise) */
static char *small_array(PyObject *seq, Py_ssize_t n, const char *what, int max) {
    int *a = int_array(seq, n, what);
    if (a == NULL)
        return NULL;
    char *c = malloc((size_t)(n > 0 ? n : 1));
    if (c == NULL) {
        free(a);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (a[k] < 0 || a[k] > max) {
            PyErr_Format(PyExc_ValueError, "%s: %d out of range", what, a[k]);
            free(a);
            free(c);
            return NULL;
        }
        c[k] = (char)a[k];
    }
    free(a);
    return c;
}

static PyObject *Machine_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    int nstates, nterms, nnonterms, end_state, lbrace;
    PyObject *actions, *gotos, *default_reduce, *only_reduce, *sizes, *origins, *unit, *watched, *term_ids,
        *callbacks;
    static char *kwlist[] = {"nstates", "nterms", "nnonterms", "actions", "gotos", "default_reduce",
                             "only_reduce", "sizes", "origins", "unit", "watched", "lbrace", "end_state",
                             "term_ids", "callbacks", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iiiOOOOOOOOiiO!O!", kwlist, &nstates, &nterms, &nnonterms,
                                     &actions, &gotos, &default_reduce, &only_reduce, &sizes, &origins,
                                     &unit, &watched, &lbrace, &end_state, &PyDict_Type, &term_ids,
                                     &PyTuple_Type, &callbacks))
        return NULL;
    if (nstates <= 0 || nterms <= 0 || nnonterms <= 0 || end_state < 0 || end_state >= nstates) {
        PyErr_SetString(PyExc_ValueError, "bad table dimensions");
        return NULL;
    }
    Machine *m = (Machine *)type->tp_alloc(type, 0);
    if (m == NULL)
        return NULL;
    Py_ssize_t nrules = PyTuple_GET_SIZE(callbacks);
    m->nstates = nstates;
    m->nterms = nterms;
    m->nnonterms = nnonterms;
    m->nrules = (int)nrules;
    m->end_state = end_state;
    m->lbrace = lbrace < 0 || lbrace >= nterms ? -1 : lbrace;
    m->term_ids = Py_NewRef(term_ids);
    m->callbacks = Py_NewRef(callbacks);
    if ((m->actions = int_array(actions, (Py_ssize_t)nstates * nterms, "actions")) == NULL ||
        (m->gotos = int_array(gotos, (Py_ssize_t)nstates * nnonterms, "gotos")) == NULL ||
        (m->default_reduce = int_array(default_reduce, nstates, "default_reduce")) == NULL ||
        (m->only_reduce = int_array(only_reduce, nstates, "only_reduce")) == NULL ||
        (m->sizes = int_array(sizes, nrules, "sizes")) == NULL ||
        (m->origins = int_array(origins, nrules, "origins")) == NULL)
        goto fail;
    if ((m->unit = small_array(unit, nrules, "unit", 1)) == NULL ||
        (m->watched = small_array(watched, nrules, "watched", 2)) == NULL)
        goto fail;
    /* every entry must lead somewhere valid: a shift to a state, a reduction by a rule */
    for (Py_ssize_t k = 0; k < (Py_ssize_t)nstates * nterms; k++) {
        int a = m->actions[k];
        if (a != NOACT && (a >= nstates || (a < 0 && -a - 1 >= nrules)))
            goto bad;
    }
    for (int k = 0; k < nstates; k++) {
        int d = m->default_reduce[k], o = m->only_reduce[k];
        if ((d != NOACT && (d >= 0 || -d - 1 >= nrules)) || (o != NOACT && (o >= 0 || -o - 1 >= nrules)))
            goto bad;
    }
    for (Py_ssize_t k = 0; k < (Py_ssize_t)nstates * nnonterms; k++)
        if (m->gotos[k] != NOACT && (m->gotos[k] < 0 || m->gotos[k] >= nstates))
            goto bad;
    for (Py_ssize_t k = 0; k < nrules; k++)
        if (m->sizes[k] < 0 || m->origins[k] < 0 || m->origins[k] >= nnonterms)
            goto bad;
    m->states = PyTuple_New(nstates);
    if (m->states == NULL)
        goto fail;
    for (int k = 0; k < nstates; k++) {
        PyObject *x = PyLong_FromLong(k);
        if (x == NULL)
            goto fail;
        PyTuple_SET_ITEM(m->states, k, x);
    }
    return (PyObject *)m;
bad:
    PyErr_SetString(PyExc_ValueError, "table entry out of range");
fail:
    Py_DECREF(m);
    return NULL;
}

/* The int stack written back into the caller's list (its whole contents replaced). */
static int write_back(Machine *m, PyObject *stack_list, const int *stack, Py_ssize_t depth) {
    PyObject *items = PyList_New(depth);
    if (items == NULL)
        return -1;
    for (Py_ssize_t k = 0; k < depth; k++) {
        PyObject *x = PyTuple_GET_ITEM(m->states, stack[k]);
        Py_INCREF(x);
        PyList_SET_ITEM(items, k, x);
    }
    int r = PyList_SetSlice(stack_list, 0, PyList_GET_SIZE(stack_list), items);
    Py_DECREF(items);
    return r;
}

/* Pushes a state, growing the array (-1 and MemoryError when it cannot grow). */
static int push_state(int **stack, Py_ssize_t *depth, Py_ssize_t *cap, int state) {
    if (*depth == *cap) {
        Py_ssize_t ncap = *cap * 2;
        int *grown = realloc(*stack, sizeof(int) * (size_t)ncap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *stack = grown;
        *cap = ncap;
    }
    (*stack)[(*depth)++] = state;
    return 0;
}

static PyObject *result(int status, PyObject *value, Py_ssize_t i) {
    return Py_BuildValue("(iOn)", status, value, i);
}

/* The caller's list read into the int stack (grown as needed): at the start, and after a watch, which may
 * have changed it (event "open" pushes a body's statements itself). */
static int read_stack(Machine *m, PyObject *stack_list, int **stack, Py_ssize_t *depth, Py_ssize_t *cap) {
    Py_ssize_t n = PyList_GET_SIZE(stack_list);
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "empty stack");
        return -1;
    }
    if (n + 1 > *cap) {
        Py_ssize_t ncap = n + 64;
        int *grown = realloc(*stack, sizeof(int) * (size_t)ncap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *stack = grown;
        *cap = ncap;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        long v = PyLong_AsLong(PyList_GET_ITEM(stack_list, k));
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < 0 || v >= m->nstates) {
            PyErr_SetString(PyExc_ValueError, "stack state out of range");
            return -1;
        }
        (*stack)[k] = (int)v;
    }
    *depth = n;
    return 0;
}

static int write_back(Machine *m, PyObject *stack_list, const int *stack, Py_ssize_t depth);

/* watch(event, i, stack, values) with the stack written back first and read again after; its result (new),
 * or NULL */
static PyObject *call_watch(Machine *m, PyObject *watch, const char *event, Py_ssize_t i, PyObject *stack_list,
                            PyObject *values, int **stack, Py_ssize_t *depth, Py_ssize_t *cap) {
    if (write_back(m, stack_list, *stack, *depth) < 0)
        return NULL;
    PyObject *r = PyObject_CallFunction(watch, "snOO", event, i, stack_list, values);
    if (r == NULL)
        return NULL;
    if (read_stack(m, stack_list, stack, depth, cap) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    return r;
}

/* the truth of a watch's answer (consumed); -1 on error */
static int truth(PyObject *r) {
    if (r == NULL)
        return -1;
    int t = PyObject_IsTrue(r);
    Py_DECREF(r);
    return t;
}

static PyObject *Machine_run(Machine *m, PyObject *args) {
    PyObject *builder, *tokens, *end_tok, *stack_list, *values, *watch = Py_None;
    Py_ssize_t i, n, max_stack, floor = 0;
    int cut, release;
    if (!PyArg_ParseTuple(args, "OO!nnOO!O!ppn|On", &builder, &PyList_Type, &tokens, &i, &n, &end_tok,
                          &PyList_Type, &stack_list, &PyList_Type, &values, &cut, &release, &max_stack, &watch,
                          &floor))
        return NULL;
    const int watching = watch != Py_None;
    Py_ssize_t depth = 0, cap = 0;
    int *stack = NULL;
    if (read_stack(m, stack_list, &stack, &depth, &cap) < 0) {
        free(stack);
        return NULL;
    }
    const int nterms = m->nterms, nnonterms = m->nnonterms;
    const int *actions = m->actions, *gotos = m->gotos;
    int defaults = 0;
    int status = -1;
    PyObject *value = Py_None;
    PyObject *ret = NULL;
    Py_INCREF(value);
    /* the lookahead's terminal id, read once per token (the reductions between two shifts look at the
       same token): the token it was read from and its index */
    PyObject *looked = NULL;
    Py_ssize_t looked_at = -1;
    long t = -1;
    for (;;) {
        PyObject *tok;
        if (i < n && i < PyList_GET_SIZE(tokens))
            tok = PyList_GET_ITEM(tokens, i);
        else
            tok = end_tok;
        Py_INCREF(tok);
        int state = stack[depth - 1];
        int act = NOACT;
        if (tok != looked || i != looked_at) {
            PyObject *type = PyObject_GetAttr(tok, s_type);
            if (type == NULL) {
                Py_DECREF(tok);
                goto error;
            }
            PyObject *tid = PyDict_GetItemWithError(m->term_ids, type);
            Py_DECREF(type);
            t = -1;
            if (tid != NULL) {
                t = PyLong_AsLong(tid);
                if (t == -1 && PyErr_Occurred()) {
                    Py_DECREF(tok);
                    goto error;
                }
            } else if (PyErr_Occurred()) {
                Py_DECREF(tok);
                goto error;
            }
            looked = tok; /* (compared by address only, while the values or the list hold it) */
            looked_at = i;
        }
        if (t >= 0 && t < nterms)
            act = actions[(Py_ssize_t)state * nterms + t];
        if (act == NOACT) {
            act = (tok == end_tok && cut) ? m->only_reduce[state] : m->default_reduce[state];
            defaults++;
            if (act == NOACT || defaults > 1000) {
                Py_DECREF(tok);
                status = 1;
                break;
            }
        } else {
            defaults = 0;
        }
        if (act >= 0) { /* shift */
            if (push_state(&stack, &depth, &cap, act) < 0) {
                Py_DECREF(tok);
                goto error;
            }
            if (PyList_Append(values, tok) < 0) {
                depth--;
                Py_DECREF(tok);
                goto error;
            }
            if (release && tok != end_tok && i < PyList_GET_SIZE(tokens)) {
                Py_INCREF(Py_None);
                PyList_SetItem(tokens, i, Py_None); /* steals; drops the list's reference to the token */
            }
            Py_DECREF(tok);
            i++;
            if (depth > max_stack) {
                status = 2;
                break;
            }
            if (watching && t == m->lbrace && t >= 0) { /* a body opens: the watch may push it whole */
                PyObject *r = call_watch(m, watch, "open", i, stack_list, values, &stack, &depth, &cap);
                if (r == NULL)
                    goto error;
                int yes = PyObject_IsTrue(r);
                if (yes < 0) {
                    Py_DECREF(r);
                    goto error;
                }
                if (yes) {
                    Py_ssize_t k2 = PyLong_AsSsize_t(r);
                    if (k2 == -1 && PyErr_Occurred()) {
                        Py_DECREF(r);
                        goto error;
                    }
                    i = k2;
                }
                Py_DECREF(r);
            }
            continue;
        }
        int k = -act - 1;
        int origin = m->origins[k];
        if (m->unit[k] && (!watching || depth > floor)) { /* the value on top is the result: only the state */
            if (depth < 2) {
                Py_DECREF(tok);
                PyErr_SetString(PyExc_IndexError, "stack underflow");
                goto error;
            }
            int g = gotos[(Py_ssize_t)stack[depth - 2] * nnonterms + origin];
            if (g == NOACT) {
                Py_DECREF(tok);
                PyErr_SetString(PyExc_KeyError, "no goto");
                goto error;
            }
            stack[depth - 1] = g;
            if (tok == end_tok && g == m->end_state) {
                Py_DECREF(tok);
                Py_ssize_t nv = PyList_GET_SIZE(values);
                Py_SETREF(value, Py_NewRef(nv ? PyList_GET_ITEM(values, nv - 1) : Py_None));
                status = 0;
                break;
            }
            Py_DECREF(tok);
            continue;
        }
        Py_DECREF(tok);
        int size = m->sizes[k];
        int w = 0;
        if (watching) {
            w = m->watched[k];
            if (depth - size < floor) {
                status = 3;
                break;
            }
            if (w == 2) {
                int stop = truth(call_watch(m, watch, "end", i, stack_list, values, &stack, &depth, &cap));
                if (stop < 0)
                    goto error;
                if (stop) {
                    status = 3;
                    break;
                }
            }
        }
        Py_ssize_t nv = PyList_GET_SIZE(values);
        if (size >= depth || size > nv) {
            PyErr_SetString(PyExc_IndexError, "stack underflow");
            goto error;
        }
        PyObject *children = PyList_GetSlice(values, nv - size, nv);
        if (children == NULL)
            goto error;
        if (size && PyList_SetSlice(values, nv - size, nv, NULL) < 0) {
            Py_DECREF(children);
            goto error;
        }
        depth -= size;
        PyObject *callargs[2] = {builder, children};
        PyObject *v = PyObject_Vectorcall(PyTuple_GET_ITEM(m->callbacks, k), callargs, 2, NULL);
        Py_DECREF(children);
        if (v == NULL)
            goto error;
        int g = gotos[(Py_ssize_t)stack[depth - 1] * nnonterms + origin];
        if (g == NOACT) {
            Py_DECREF(v);
            PyErr_SetString(PyExc_KeyError, "no goto");
            goto error;
        }
        if (push_state(&stack, &depth, &cap, g) < 0) { /* (size 0: a push without a pop) */
            Py_DECREF(v);
            goto error;
        }
        if (PyList_Append(values, v) < 0) {
            depth--;
            Py_DECREF(v);
            goto error;
        }
        if (w) {
            int stop = truth(call_watch(m, watch, w == 1 ? "item" : "list", i, stack_list, values, &stack, &depth,
                                        &cap));
            if (stop < 0) {
                Py_DECREF(v);
                goto error;
            }
            if (stop) {
                Py_DECREF(v);
                status = 3;
                break;
            }
            g = stack[depth - 1]; /* (as the list has it now) */
        }
        if (tok == end_tok && g == m->end_state) {
            Py_SETREF(value, v);
            status = 0;
            break;
        }
        Py_DECREF(v);
    }
    if (write_back(m, stack_list, stack, depth) == 0)
        ret = result(status, value, i);
    free(stack);
    Py_DECREF(value);
    return ret;
error: {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    (void)write_back(m, stack_list, stack, depth);
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
    free(stack);
    Py_DECREF(value);
    return NULL;
}
}

static PyMethodDef Machine_methods[] = {
    {"run", (PyCFunction)Machine_run, METH_VARARGS,
     "run(builder, tokens, i, n, end_token, stack, values, cut, release, max_stack) -> (status, value, i)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MachineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "puppet_xpp.grammar._accel.Machine",
    .tp_basicsize = sizeof(Machine),
    .tp_dealloc = (destructor)Machine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The LALR(1) tables and actions of one Builder class, run over a token list.",
    .tp_methods = Machine_methods,
    .tp_new = Machine_new,
};


/* ------------------------------------------------------------------------------------------------- */
/* the lexer's fast path                                                                             */

static PyTypeObject *g_token = NULL;                   /* grammar.lexer.Token */
static Py_ssize_t off_type, off_value, off_start, off_end; /* its slots */
static PyObject *g_types = NULL; /* the token type strings, in the order of enum TokType */
enum TokType { TK_VARIABLE, TK_WORD, TK_NAME, TK_CLASSREF, TK_STRING, TK_LBRACE, TK_SELBRACE, TK_RBRACE, TK_LISTSTART,
               TK_LBRACK, TK_WSLPAREN, TK_LPAREN, TK_NUMBER, TK_QMARK, TK_NTYPES };
static PyObject *g_ops = NULL;   /* operator text -> token type */

static Py_ssize_t slot_offset(PyTypeObject *cls, const char *name) {
    PyObject *d = PyObject_GetAttrString((PyObject *)cls, name);
    if (d == NULL)
        return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a __slots__ member", cls->tp_name, name);
        Py_DECREF(d);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    Py_ssize_t off = m->offset;
    int ok = m->type == T_OBJECT_EX && !(m->flags & READONLY) && off > 0 &&
             (size_t)off + sizeof(PyObject *) <= (size_t)cls->tp_basicsize;
    Py_DECREF(d);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a writable object slot", cls->tp_name, name);
        return -1;
    }
    return off;
}

/* configure_lexer(Token, types, ops): the Token class, the type names of enum TokType, the operators */
static PyObject *configure_lexer(PyObject *self, PyObject *args) {
    PyObject *token, *types, *ops;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &token, &PyTuple_Type, &types, &PyDict_Type, &ops))
        return NULL;
    if (PyTuple_GET_SIZE(types) != TK_NTYPES) {
        PyErr_SetString(PyExc_ValueError, "configure_lexer: wrong number of token types");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < TK_NTYPES; k++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(types, k))) {
            PyErr_SetString(PyExc_TypeError, "configure_lexer: a token type is not a str");
            return NULL;
        }
    PyTypeObject *cls = (PyTypeObject *)token;
    Py_ssize_t a = slot_offset(cls, "type"), b = slot_offset(cls, "value"), c = slot_offset(cls, "start_pos"),
               d = slot_offset(cls, "end_pos");
    if (a < 0 || b < 0 || c < 0 || d < 0)
        return NULL;
    if (cls->tp_init != NULL && cls->tp_dictoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "configure_lexer: Token must have slots only");
        return NULL;
    }
    off_type = a;
    off_value = b;
    off_start = c;
    off_end = d;
    Py_XSETREF(g_token, (PyTypeObject *)Py_NewRef(token));
    Py_XSETREF(g_types, Py_NewRef(types));
    Py_XSETREF(g_ops, Py_NewRef(ops));
    Py_RETURN_NONE;
}

/* a new Token (type borrowed; value, start and end stolen) appended to toks */
static int emit(PyObject *toks, PyObject *type, PyObject *value, PyObject *start, PyObject *end) {
    if (value == NULL || start == NULL || end == NULL)
        goto fail;
    PyObject *t = g_token->tp_alloc(g_token, 0);
    if (t == NULL)
        goto fail;
    *(PyObject **)((char *)t + off_type) = Py_NewRef(type);
    *(PyObject **)((char *)t + off_value) = value;
    *(PyObject **)((char *)t + off_start) = start;
    *(PyObject **)((char *)t + off_end) = end;
    int r = PyList_Append(toks, t);
    Py_DECREF(t);
    return r;
fail:
    Py_XDECREF(value);
    Py_XDECREF(start);
    Py_XDECREF(end);
    return -1;
}

#define CH(i) PyUnicode_READ(kind, data, (i))

static inline int is_w(Py_UCS4 c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* the end of `[a-z_](?:[A-Za-z0-9_-]*W)?` from q (text[q] is [a-z_]) */
static Py_ssize_t seg_end(int kind, const void *data, Py_ssize_t len, Py_ssize_t q) {
    Py_ssize_t e = q + 1, k = q + 1;
    while (k < len && (is_w(CH(k)) || CH(k) == '-')) {
        k++;
        if (is_w(CH(k - 1)))
            e = k;
    }
    return e;
}

/* the end of `(?:W+::)*W+` from q, or q when no W there */
static Py_ssize_t name_end(int kind, const void *data, Py_ssize_t len, Py_ssize_t q) {
    Py_ssize_t e = q;
    while (e < len && is_w(CH(e)))
        e++;
    if (e == q)
        return q;
    while (e + 2 < len && CH(e) == ':' && CH(e + 1) == ':' && is_w(CH(e + 2))) {
        e += 2;
        while (e < len && is_w(CH(e)))
            e++;
    }
    return e;
}

/* the length of the operator at q (the OP alternative, in its order), 0: none */
static int op_len(int kind, const void *data, Py_ssize_t len, Py_ssize_t q) {
    Py_UCS4 c = CH(q), d = q + 1 < len ? CH(q + 1) : 0, e = q + 2 < len ? CH(q + 2) : 0;
    switch (c) {
    case ',': case ';': case '?': case '*': case ']': case '.': case ')': case '%':
        return 1;
    case '=':
        return (d == '>' || d == '=' || d == '~') ? 2 : 1;
    case '+':
        return (d == '=' || d == '>') ? 2 : 1;
    case '-':
        return (d == '>' || d == '=') ? 2 : 1;
    case '!':
        return (d == '=' || d == '~') ? 2 : 1;
    case '~':
        return d == '>' ? 2 : 1;
    case '<':
        if (d == '<')
            return e == '|' ? 3 : 2;
        return (d == '=' || d == '|' || d == '-' || d == '~') ? 2 : 1;
    case '>':
        return (d == '>' || d == '=') ? 2 : 1;
    case '|':
        if (d == '>')
            return e == '>' ? 3 : 2;
        return 1;
    case '@':
        if (d == '@')
            return 2;
        return d == '(' ? 0 : 1;
    case ':':
        return d == ':' ? 0 : 1;
    default:
        return 0;
    }
}

/* the string value of text[a:b], the one of `values` when equal (values.setdefault); `v` a new string */
static PyObject *same_str(PyObject *values, PyObject *v) {
    if (v == NULL)
        return NULL;
    PyObject *w = PyDict_SetDefault(values, v, v);
    Py_XINCREF(w);
    Py_DECREF(v);
    return w;
}

static PyObject *same(PyObject *values, PyObject *text, Py_ssize_t a, Py_ssize_t b) {
    return same_str(values, PyUnicode_Substring(text, a, b));
}

/* a blank of Ruby's [[:blank:]] (grammar/lexer_text.py BLANKS) */
static inline int is_blank(Py_UCS4 c) {
    return c == ' ' || c == '\t' || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x202f ||
           c == 0x205f || c == 0x3000;
}

/* scan(text, pos, toks, values, kw, after, interp=False) -> pos: see the module's description.  `after`: the
 * token type before pos (Engine.after()); `interp`: the code of a "${...}" (it stops at every brace). */
static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *text, *toks, *values, *kw, *after;
    Py_ssize_t pos;
    int interp = 0;
    if (!PyArg_ParseTuple(args, "O!nO!O!O!O|p", &PyUnicode_Type, &text, &pos, &PyList_Type, &toks, &PyDict_Type,
                          &values, &PyDict_Type, &kw, &after, &interp))
        return NULL;
    if (g_token == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_lexer() first");
        return NULL;
    }
    if (pos < 0)
        return PyLong_FromSsize_t(pos);
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const int ascii = PyUnicode_IS_ASCII(text);
    const Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int prev_qmark = PyUnicode_Check(after) && PyUnicode_Compare(after, PyTuple_GET_ITEM(g_types, TK_QMARK)) == 0;
    if (prev_qmark == 0 && PyErr_Occurred())
        return NULL;
    PyObject *last_end = NULL; /* the end position object of the last token (shared with the next start) */
    Py_ssize_t last = -1;
    while (pos < len) {
        /* the skipped prefix: blanks, newlines, comments */
        Py_ssize_t q = pos;
        for (;;) {
            while (q < len && (CH(q) == ' ' || CH(q) == '\t' || CH(q) == '\r' || CH(q) == '\n'))
                q++;
            if (q < len && CH(q) == '#') {
                while (q < len && CH(q) != '\n')
                    q++;
                continue;
            }
            if (q + 1 < len && CH(q) == '/' && CH(q + 1) == '*') {
                Py_ssize_t k = q + 2;
                while (k + 1 < len && !(CH(k) == '*' && CH(k + 1) == '/'))
                    k++;
                if (k + 1 >= len)
                    break; /* unclosed: the Python loop reports it */
                q = k + 2;
                continue;
            }
            break;
        }
        pos = q;
        if (q >= len)
            break;
        Py_UCS4 c = CH(q);
        if (interp && (c == '{' || c == '}'))
            break; /* inside "${...}": the Python loop counts the braces and finds the closing one */
        Py_ssize_t e;
        int type = 0;
        PyObject *value;
        PyObject *typeobj = NULL; /* a keyword's or an operator's type, else the one of `type` */
        if (c == '$') {
            Py_ssize_t k = q + 1, ne = q + 1;
            if (k + 2 < len && CH(k) == ':' && CH(k + 1) == ':' && is_w(CH(k + 2)))
                ne = name_end(kind, data, len, k + 2);
            else
                ne = name_end(kind, data, len, k);
            e = ne;
            type = TK_VARIABLE;
            value = same(values, text, q + 1, e);
        } else if ((c >= 'a' && c <= 'z') || c == '_') {
            e = seg_end(kind, data, len, q);
            while (e + 2 < len && CH(e) == ':' && CH(e + 1) == ':' && ((CH(e + 2) >= 'a' && CH(e + 2) <= 'z') || CH(e + 2) == '_'))
                e = seg_end(kind, data, len, e + 2);
            value = same(values, text, q, e);
            if (value == NULL)
                goto error;
            typeobj = PyDict_GetItemWithError(kw, value); /* a keyword: its own type */
            if (typeobj == NULL && PyErr_Occurred()) {
                Py_DECREF(value);
                goto error;
            }
            type = TK_NAME;
            if (c == '_')
                type = TK_WORD;
            for (Py_ssize_t k2 = q; k2 < e && type == TK_NAME && typeobj == NULL; k2++)
                if (CH(k2) == '-' || (CH(k2) == ':' && k2 + 2 < e && CH(k2 + 1) == ':' && CH(k2 + 2) == '_'))
                    type = TK_WORD;
        } else if (c >= 'A' && c <= 'Z') {
            e = q + 1;
            for (;;) {
                while (e < len && is_w(CH(e)))
                    e++;
                if (e + 2 < len && CH(e) == ':' && CH(e + 1) == ':' && CH(e + 2) >= 'A' && CH(e + 2) <= 'Z')
                    e += 3;
                else
                    break;
            }
            if (e + 1 < len && CH(e) == ':' && CH(e + 1) == ':')
                break; /* ILLEGAL_CLASS_REFERENCE: the Python loop */
            type = TK_CLASSREF;
            value = same(values, text, q, e);
        } else if (c == '\'') {
            Py_ssize_t k = q + 1;
            int esc = 0;
            while (k < len && CH(k) != '\'') {
                if (CH(k) == '\\') {
                    esc = 1;
                    k++;
                }
                k++;
            }
            if (k >= len)
                break; /* unclosed */
            e = k + 1;
            if (e - q == 2 && e < len && (CH(e) == '\'' || CH(e) == '\\'))
                break; /* Puppet's quirk for '' before a quote: the Python loop */
            if (!esc) {
                value = same(values, text, q + 1, e - 1);
            } else { /* \\ and \' are the escapes of a single-quoted string */
                if (!ascii)
                    break; /* (built here for an ASCII text only) */
                unsigned char *buf = PyMem_Malloc((size_t)(e - q));
                if (buf == NULL) {
                    PyErr_NoMemory();
                    goto error;
                }
                Py_ssize_t o = 0;
                for (Py_ssize_t j = q + 1; j < e - 1; j++) {
                    if (CH(j) == '\\' && j + 1 < e - 1 && (CH(j + 1) == '\\' || CH(j + 1) == '\''))
                        j++;
                    buf[o++] = CH(j);
                }
                value = same_str(values, PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, buf, o));
                PyMem_Free(buf);
            }
            type = TK_STRING;
        } else if (c == '"') {
            Py_ssize_t k = q + 1;
            while (k < len && CH(k) != '"' && CH(k) != '\\' && CH(k) != '$')
                k++;
            if (k >= len || CH(k) != '"')
                break; /* escapes, interpolation or unclosed: the Python loop */
            if (k == q + 1 && k + 1 < len && (CH(k + 1) == '\\' || CH(k + 1) == '"' || CH(k + 1) == '$'))
                break;
            e = k + 1;
            type = TK_STRING;
            value = PyUnicode_Substring(text, q + 1, e - 1);
        } else if (c >= '0' && c <= '9') {
            e = q;
            while (e < len && CH(e) >= '0' && CH(e) <= '9')
                e++;
            if (e < len && (is_w(CH(e)) || CH(e) == '.' || CH(e) > 127)) /* (a Unicode letter: no \\b) */
                break; /* floats, hex, octal and bad numbers: the Python loop */
            if (c == '0' && e - q > 1)
                break;
            type = TK_NUMBER;
            value = PyUnicode_Substring(text, q, e);
        } else if (c == '{') {
            e = q + 1;
            type = prev_qmark ? TK_SELBRACE : TK_LBRACE;
            value = PyUnicode_FromOrdinal('{');
        } else if (c == '}') {
            e = q + 1;
            type = TK_RBRACE;
            value = PyUnicode_FromOrdinal('}');
        } else if (c == '[') {
            e = q + 1;
            type = (q == 0 || is_blank(CH(q - 1)) || CH(q - 1) == '\r' || CH(q - 1) == '\n')
                       ? TK_LISTSTART
                       : TK_LBRACK;
            value = PyUnicode_FromOrdinal('[');
        } else if (c == '(') {
            e = q + 1;
            Py_ssize_t k = q - 1;
            while (k >= 0 && (is_blank(CH(k)) || CH(k) == '\r'))
                k--;
            type = (k < 0 || CH(k) == '\n') ? TK_WSLPAREN : TK_LPAREN;
            value = PyUnicode_FromOrdinal('(');
        } else {
            int n = op_len(kind, data, len, q);
            if (n == 0)
                break; /* anything else: the Python loop */
            e = q + n;
            value = same(values, text, q, e);
            if (value == NULL)
                goto error;
            typeobj = PyDict_GetItemWithError(g_ops, value);
            if (typeobj == NULL) {
                Py_DECREF(value);
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_KeyError, "operator");
                goto error;
            }
        }
        if (value == NULL)
            goto error;
        PyObject *start = (last == q && last_end != NULL) ? Py_NewRef(last_end) : PyLong_FromSsize_t(q);
        PyObject *end = PyLong_FromSsize_t(e);
        PyObject *end_ref = Py_XNewRef(end);
        if (typeobj == NULL)
            typeobj = PyTuple_GET_ITEM(g_types, type);
        prev_qmark = PyUnicode_Compare(typeobj, PyTuple_GET_ITEM(g_types, TK_QMARK)) == 0;
        if (emit(toks, typeobj, value, start, end) < 0) {
            Py_XDECREF(end_ref);
            goto error;
        }
        Py_XSETREF(last_end, end_ref);
        last = e;
        pos = e;
    }
    Py_XDECREF(last_end);
    return PyLong_FromSsize_t(pos);
error:
    Py_XDECREF(last_end);
    return NULL;
}


/* ------------------------------------------------------------------------------------------------- */
/* positions of nodes built without one                                                              */

static PyObject *s_offset = NULL, *s_length = NULL, *s_child_fields = NULL;
/* a function of Python code that does nothing: long walks call it now and then so that a thread waiting
 * for the GIL gets it (the interpreter hands it over where Python code runs; fix_positions) */
static PyObject *switch_point = NULL;

typedef struct {
    PyObject *node; /* borrowed: reachable from the root for the whole walk */
    Py_ssize_t depth;
} Frame;

/* fix_positions(root, Node, limit, skip=None) -> the first node deeper than limit, or None:
 * grammar/parser.py fix_positions, the same walk in the same order (a stack of (node, depth), children
 * pushed in field and list order).  A node without a position (offset None) takes its container's
 * offset and length 0.  A node whose id() is in ``skip`` (a set) is not entered (the incremental
 * parser's statements kept from before: done already). */
static PyObject *fix_positions(PyObject *self, PyObject *args) {
    PyObject *root, *node_cls, *skip = Py_None;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OO!n|O", &root, &PyType_Type, &node_cls, &limit, &skip))
        return NULL;
    if (skip != Py_None && !PyAnySet_Check(skip)) {
        PyErr_SetString(PyExc_TypeError, "fix_positions: skip must be a set (of id()s)");
        return NULL;
    }
    if (skip != Py_None && PySet_GET_SIZE(skip) == 0)
        skip = NULL;
    else if (skip == Py_None)
        skip = NULL;
    PyTypeObject *node_type = (PyTypeObject *)node_cls;
    Py_ssize_t cap = 256, top = 0;
    Frame *stack = PyMem_Malloc(sizeof(Frame) * (size_t)cap);
    if (stack == NULL)
        return PyErr_NoMemory();
    PyObject *fields_of = PyDict_New(); /* type -> its _child_fields (looked up once per class) */
    if (fields_of == NULL) {
        PyMem_Free(stack);
        return NULL;
    }
    PyObject *too_deep = Py_None;
    stack[top++] = (Frame){root, 0};
    unsigned walked = 0;
    while (top) {
        /* Other threads run now and then: a 5 MB manifest's tree takes 150-170 ms, and the language
         * server's requests on other documents waited for all of it (its analysis runs on a thread apart:
         * tests/lsp/test_huge_document.py).  Not by releasing the GIL here: a release wakes a waiting
         * thread before its switch interval has run out, so it never asks for the GIL, and this walk
         * takes it back first -- released every 4,096 nodes, the server's reader still waited the whole
         * 160 ms for it (load 2-3).  A call of Python code (``switch_point``) is where the interpreter
         * honours a waiting thread's request, as between any two Python statements.  The nodes stay
         * alive meanwhile: the tree is the caller's, and nothing changes its shape while it is being
         * parsed (the parser's lock). */
        if (++walked % 4096 == 0) {
            PyObject *r = PyObject_CallNoArgs(switch_point);
            if (r == NULL)
                goto error;
            Py_DECREF(r);
        }
        Frame f = stack[--top];
        PyObject *node = f.node;
        if (f.depth > limit && too_deep == Py_None)
            too_deep = node;
        if (skip != NULL) {
            PyObject *key = PyLong_FromVoidPtr(node); /* id(node) */
            if (key == NULL)
                goto error;
            int hit = PySet_Contains(skip, key);
            Py_DECREF(key);
            if (hit < 0)
                goto error;
            if (hit)
                continue;
        }
        PyObject *o = NULL; /* the node's offset (None when it has none) */
        if (PyObject_HasAttr(node, s_offset)) {
            o = PyObject_GetAttr(node, s_offset);
            if (o == NULL)
                goto error;
        } else {
            o = Py_NewRef(Py_None);
        }
        Py_ssize_t depth = f.depth + 1;
        PyObject *cls = (PyObject *)Py_TYPE(node);
        PyObject *fields = PyDict_GetItemWithError(fields_of, cls);
        if (fields == NULL) {
            if (PyErr_Occurred())
                goto error_o;
            PyObject *got = PyObject_GetAttr(cls, s_child_fields);
            if (got == NULL)
                goto error_o;
            fields = PySequence_Tuple(got);
            Py_DECREF(got);
            if (fields == NULL)
                goto error_o;
            int r = PyDict_SetItem(fields_of, cls, fields);
            Py_DECREF(fields); /* (the dict holds it) */
            if (r < 0)
                goto error_o;
        }
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(fields); k++) {
            PyObject *v = PyObject_GetAttr(node, PyTuple_GET_ITEM(fields, k));
            if (v == NULL)
                goto error_o;
            PyObject *one[1] = {v};
            PyObject **items = one;
            Py_ssize_t n = 1;
            if (PyList_Check(v)) {
                items = PySequence_Fast_ITEMS(v);
                n = PyList_GET_SIZE(v);
            } else if (v == Py_None || !PyObject_TypeCheck(v, node_type)) {
                n = 0;
            }
            for (Py_ssize_t j = 0; j < n; j++) {
                PyObject *x = items[j];
                if (!PyObject_TypeCheck(x, node_type))
                    continue;
                PyObject *xo = PyObject_GetAttr(x, s_offset);
                if (xo == NULL) {
                    Py_DECREF(v);
                    goto error_o;
                }
                int unset = xo == Py_None;
                Py_DECREF(xo);
                if (unset) {
                    PyObject *zero = PyLong_FromLong(0);
                    if (zero == NULL || PyObject_SetAttr(x, s_offset, o) < 0 ||
                        PyObject_SetAttr(x, s_length, zero) < 0) {
                        Py_XDECREF(zero);
                        Py_DECREF(v);
                        goto error_o;
                    }
                    Py_DECREF(zero);
                }
                if (top == cap) {
                    Frame *grown = PyMem_Realloc(stack, sizeof(Frame) * (size_t)(cap * 2));
                    if (grown == NULL) {
                        Py_DECREF(v);
                        PyErr_NoMemory();
                        goto error_o;
                    }
                    stack = grown;
                    cap *= 2;
                }
                stack[top++] = (Frame){x, depth};
            }
            Py_DECREF(v); /* (the node still holds it: its items stay alive) */
        }
        Py_DECREF(o);
        continue;
    error_o:
        Py_DECREF(o);
        goto error;
    }
    PyMem_Free(stack);
    Py_DECREF(fields_of);
    return Py_NewRef(too_deep);
error:
    PyMem_Free(stack);
    Py_DECREF(fields_of);
    return NULL;
}

/* The validator's pre-order walk (grammar/validator/walk.py Walker._visit, the same calls in the same
 * order): below node, for each (field, is_list) of cont[type(node)], each child c of that field (the
 * list's items, or the value; None skipped): checks[type(c)](walker, c) unless None, then c's own walk
 * when cont[type(c)] is not empty.  ``path`` holds the ancestors of the node being checked (node
 * appended on entry, removed after its walk; an exception leaves it as the Python walk leaves it).
 * Recursive like the Python walk, within the interpreter's recursion limit (RecursionError beyond it:
 * the caller walks again without recursion).
 *
 * With ``stop`` (a set of id()s; Walker.validate_part, the incremental parser's validation of new
 * statements), a child whose id() is in it is neither checked nor entered: (child, a copy of path) is
 * appended to ``stopped`` instead. */
typedef struct {
    PyObject *walker, *checks, *cont, *path;
    PyObject *stop;    /* a set or frozenset of id()s, or NULL */
    PyObject *stopped; /* a list (when stop is given) */
} Walk;

static int visit_child(Walk *w, PyObject *c);

static int visit(Walk *w, PyObject *node) {
    PyObject *cont = w->cont, *path = w->path;
    if (Py_EnterRecursiveCall(" in the validator's walk"))
        return -1;
    int r = -1;
    if (PyList_Append(path, node) < 0)
        goto out;
    PyObject *fields = PyDict_GetItemWithError(cont, (PyObject *)Py_TYPE(node));
    if (fields == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, (PyObject *)Py_TYPE(node));
        goto out;
    }
    Py_INCREF(fields);
    PyObject *fast = PySequence_Fast(fields, "containment must be a sequence");
    Py_DECREF(fields);
    if (fast == NULL)
        goto out;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fast); k++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(fast, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "containment entries must be (field, is_list) pairs");
            Py_DECREF(fast);
            goto out;
        }
        PyObject *v = PyObject_GetAttr(node, PyTuple_GET_ITEM(pair, 0));
        if (v == NULL) {
            Py_DECREF(fast);
            goto out;
        }
        int failed = 0;
        if (v != Py_None) {
            int is_list = PyObject_IsTrue(PyTuple_GET_ITEM(pair, 1));
            if (is_list < 0) {
                failed = 1;
            } else if (!is_list) {
                failed = visit_child(w, v) < 0;
            } else if (PyList_CheckExact(v)) {
                /* as a list iterator does: the length read again at each step */
                for (Py_ssize_t j = 0; !failed && j < PyList_GET_SIZE(v); j++) {
                    PyObject *c = Py_NewRef(PyList_GET_ITEM(v, j));
                    failed = visit_child(w, c) < 0;
                    Py_DECREF(c);
                }
            } else {
                PyObject *it = PyObject_GetIter(v), *c;
                failed = it == NULL;
                while (!failed && (c = PyIter_Next(it)) != NULL) {
                    failed = visit_child(w, c) < 0;
                    Py_DECREF(c);
                }
                failed = failed || PyErr_Occurred();
                Py_XDECREF(it);
            }
        }
        Py_DECREF(v);
        if (failed) {
            Py_DECREF(fast);
            goto out;
        }
    }
    Py_DECREF(fast);
    r = PyList_SetSlice(path, PyList_GET_SIZE(path) - 1, PyList_GET_SIZE(path), NULL);
out:
    Py_LeaveRecursiveCall();
    return r;
}

static int visit_child(Walk *w, PyObject *c) {
    PyObject *walker = w->walker, *checks = w->checks, *cont = w->cont;
    if (w->stop != NULL) {
        PyObject *key = PyLong_FromVoidPtr(c); /* id(c) */
        if (key == NULL)
            return -1;
        int hit = PySet_Contains(w->stop, key);
        Py_DECREF(key);
        if (hit < 0)
            return -1;
        if (hit) {
            PyObject *where = PyList_GetSlice(w->path, 0, PyList_GET_SIZE(w->path));
            if (where == NULL)
                return -1;
            PyObject *pair = PyTuple_Pack(2, c, where);
            Py_DECREF(where);
            if (pair == NULL)
                return -1;
            int r = PyList_Append(w->stopped, pair);
            Py_DECREF(pair);
            return r;
        }
    }
    PyObject *t = (PyObject *)Py_TYPE(c);
    PyObject *fn = PyDict_GetItemWithError(checks, t);
    if (fn == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, t);
        return -1;
    }
    if (fn != Py_None) {
        Py_INCREF(fn);
        PyObject *args[2] = {walker, c};
        PyObject *res = PyObject_Vectorcall(fn, args, 2, NULL);
        Py_DECREF(fn);
        if (res == NULL)
            return -1;
        Py_DECREF(res);
    }
    PyObject *kids = PyDict_GetItemWithError(cont, t);
    if (kids == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, t);
        return -1;
    }
    int more = PyObject_IsTrue(kids);
    if (more <= 0)
        return more;
    return visit(w, c);
}

/* walk(walker, node, checks, cont, path, stop=None, stopped=None) -> None: see visit */
static PyObject *walk(PyObject *self, PyObject *args) {
    Walk w = {NULL, NULL, NULL, NULL, NULL, NULL};
    PyObject *node, *stop = Py_None, *stopped = Py_None;
    if (!PyArg_ParseTuple(args, "OOO!O!O!|OO", &w.walker, &node, &PyDict_Type, &w.checks, &PyDict_Type, &w.cont,
                          &PyList_Type, &w.path, &stop, &stopped))
        return NULL;
    if (stop != Py_None) {
        if (!PyAnySet_Check(stop) || !PyList_Check(stopped)) {
            PyErr_SetString(PyExc_TypeError, "walk: stop must be a set (of id()s) and stopped a list");
            return NULL;
        }
        if (PySet_GET_SIZE(stop) > 0) {
            w.stop = stop;
            w.stopped = stopped;
        }
    }
    if (visit(&w, node) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"walk", walk, METH_VARARGS,
     "walk(walker, node, checks, containment, path, stop=None, stopped=None): the validator's walk below node"},
    {"fix_positions", fix_positions, METH_VARARGS,
     "fix_positions(root, Node, limit, skip=None) -> the first node too deep, or None"},
    {"configure_lexer", configure_lexer, METH_VARARGS, "configure_lexer(Token, types, ops): see scan"},
    {"scan", scan, METH_VARARGS, "scan(text, pos, toks, values, keywords, after, interp=False) -> the position it stopped at"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef accel_module = {
    PyModuleDef_HEAD_INIT, "_accel", "The parser's LR driver loop, the lexer's fast path and the validator's walk in C.", -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__accel(void) {
    s_type = PyUnicode_InternFromString("type");
    s_offset = PyUnicode_InternFromString("offset");
    s_length = PyUnicode_InternFromString("length");
    s_child_fields = PyUnicode_InternFromString("_child_fields");
    if (s_type == NULL || s_offset == NULL || s_length == NULL || s_child_fields == NULL)
        return NULL;
    if (PyType_Ready(&MachineType) < 0)
        return NULL;
    if (switch_point == NULL) {
        PyObject *globals = PyDict_New();
        if (globals == NULL || PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0) {
            Py_XDECREF(globals);
            return NULL;
        }
        switch_point = PyRun_String("lambda: None", Py_eval_input, globals, globals);
        Py_DECREF(globals);
        if (switch_point == NULL)
            return NULL;
    }
    PyObject *mod = PyModule_Create(&accel_module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&MachineType);
    if (PyModule_AddObject(mod, "Machine", (PyObject *)&MachineType) < 0) {
        Py_DECREF(&MachineType);
        Py_DECREF(mod);
        return NULL;
    }
    if (PyModule_AddIntConstant(mod, "ACCEPTED", 0) < 0 || PyModule_AddIntConstant(mod, "SYNTAX_ERROR", 1) < 0 ||
        PyModule_AddIntConstant(mod, "TOO_DEEP", 2) < 0 ||
        PyModule_AddIntConstant(mod, "WALK_STOP", 1) < 0 || /* walk takes stop/stopped */
        PyModule_AddIntConstant(mod, "FIX_SKIP", 1) < 0) {  /* fix_positions takes skip */
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
