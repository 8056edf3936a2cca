/*
 * blake2b_type.c - argonishche._blake2b_type: the ``blake2b`` type (a drop-in for
 * hashlib.blake2b) as a CPython extension type, so that the Python-to-C boundary costs what
 * hashlib's does.
 *
 * Built against the stable ABI of CPython 3.11 (Py_LIMITED_API 0x030B0000, an abi3 module like
 * the cffi ones): a heap type from PyType_FromModuleAndSpec, tp_new doing all of the
 * construction (3.11's limited API has no vectorcall for a type), buffers through
 * PyObject_GetBuffer.
 *
 * Sub-interpreters: multi-phase initialisation with per-module state (module_state), so each
 * interpreter has its own module, type, resolver and selected table (pushed by its own
 * registry); the same .so declares per-interpreter-GIL support on 3.12 and later (see PyInit).
 *
 * No BLAKE2b here: init/update/final are the core's (core/csrc/blake2b.c, in argonishche._core)
 * and the compression function is the selected backend's, through its kernel table.  The core's
 * function pointers and the resolver are handed over once, by argonishche._blake2 (connect()),
 * when it is imported in an interpreter.
 *
 * The kernel table: like the Python class before it, every object takes the table selected
 * when it is made (the registry's tables["blake2b"], which calibrate(), a quarantine and a
 * forced backend set), or the named backend's with backend=.  The selection is pushed, not
 * looked up: the process registry calls set_selected() (through argonishche._blake2) whenever
 * it changes -- built, reset, re-chosen (Registry._choose), forgotten in a forked child -- so a
 * construction reads one pointer of the module state.  Nothing pushed (no registry yet, or no
 * usable backend) asks the Python side, which builds the registry or raises what it raises.
 *
 * What a small hash costs besides the kernel, kept at hashlib's or below: the module state
 * found from the type in two calls (state_of_type), the data of bytes taken without the buffer
 * protocol, a default object's state copied from one made once per pushed table, freed
 * objects of the type kept for the next ones, and the GIL kept under GIL_MINSIZE bytes.
 *
 * Threads, as in hashlib: an object may be shared.  Updates of 2048 bytes or more release the
 * GIL; the first such update gives the object its lock, and from then on every use of the
 * state takes it.  Without a lock everything runs under the GIL, and the lock pointer only
 * changes (NULL to a lock, once) under the GIL, so no use can run without it once another
 * thread may be inside the state.
 *
 * Secrets: the state of a keyed object (and of its copies) is wiped with the core's
 * argonishche_secure_wipe when the object is freed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <string.h>

#include "argonishche_core.h"

#define GIL_MINSIZE 2048 /* hashlib's HASHLIB_GIL_MINSIZE */

typedef int (*init_fn)(argonishche_blake2b_state *, const void *, size_t, const uint8_t *,
                       size_t, const uint8_t *, size_t, const uint8_t *, size_t,
                       const argonishche_blake2b_tree *);
typedef void (*update_fn)(argonishche_blake2b_state *, const uint8_t *, size_t);
typedef void (*final_fn)(argonishche_blake2b_state *, uint8_t *);
typedef void (*wipe_fn)(void *, size_t);

/* The core's functions, handed over by connect(): the same addresses in every interpreter (the
 * core is loaded once per process), but kept in each module's state like the rest. */
typedef struct {
    init_fn init; /* NULL until connect(): connected() tests it */
    update_fn update;
    final_fn final;
    wipe_fn wipe;
} core_functions;

/* The keywords, in hashlib's order (then backend=); the tree-hashing ones are contiguous. */
enum {
    ARG_DATA, ARG_DIGEST_SIZE, ARG_KEY, ARG_SALT, ARG_PERSON, ARG_FANOUT, ARG_DEPTH,
    ARG_LEAF_SIZE, ARG_NODE_OFFSET, ARG_NODE_DEPTH, ARG_INNER_SIZE, ARG_LAST_NODE,
    ARG_USEDFORSECURITY, ARG_BACKEND, N_ARGS
};
#define N_TREE_ARGS (ARG_LAST_NODE - ARG_FANOUT + 1)
static const char *const keyword_names[N_ARGS] = {
    "data", "digest_size", "key", "salt", "person", "fanout", "depth", "leaf_size",
    "node_offset", "node_depth", "inner_size", "last_node", "usedforsecurity", "backend"};

/* Everything the module keeps, per module object and so per interpreter (PEP 489 multi-phase
 * initialisation, PEP 573 module state): no C static is written after compilation, so that each
 * interpreter's module has its own type, its own resolver and the table its own registry
 * pushes, and destroying one interpreter leaves the others' intact. */
typedef struct {
    core_functions core;
    PyTypeObject *type;       /* this module's blake2b type */
    PyObject *resolver;       /* backend or None -> (table object, address) */
    PyObject *parameter_error, *parameter_type_error, *parameter_overflow_error;
    /* The process registry's selected table, as its last push (set_selected) gave it: the
     * table object (kept alive here) and its address; NULL when nothing is pushed.  Written
     * and read under the GIL (this interpreter's: each has its own module state). */
    PyObject *selected_table;
    const void *selected;
    /* The core's init of a state for *selected* with the default parameters (64-byte digest,
     * nothing else): copied into each such new object, which costs less than init. */
    argonishche_blake2b_state default_state;
    /* Freed objects of the type itself, for the next ones (pymalloc's own lists cost more);
     * never more than FREE_OBJECTS_MAX of them. */
    struct Blake2bObject *free_objects;
    int n_free_objects;
    PyObject *s_blake2b, *empty_bytes, *zero;
    PyObject *keywords[N_ARGS]; /* interned */
} module_state;

typedef struct Blake2bObject {
    PyObject_HEAD
    PyThread_type_lock lock; /* NULL until the first update that releases the GIL */
    PyObject *pending; /* the bytes of an unkeyed object made from bytes and not updated since:
                          what pickling restores it from (as before); NULL otherwise */
    int keyed;         /* the state holds or held a key: wiped on dealloc */
    /* The state of the module whose type made the object (its type, or a subclass of it): the
     * object holds its type, which holds that module, so the state outlives the object.  Kept
     * here because a method gets only self, and PyType_GetModuleByDef (which would find it
     * from a subclass) is not in the limited API before 3.13. */
    module_state *owner;
    struct Blake2bObject *next_free; /* on module_state.free_objects only */
    argonishche_blake2b_state state;
} Blake2bObject;

#define FREE_OBJECTS_MAX 8

static PyModuleDef module_def, module_def_311;

#define N_METHODS 6
static PyMethodDef blake2b_methods[N_METHODS + 1];

static int connected(module_state *st) {
    if (st->core.init != NULL) return 1;
    PyErr_SetString(PyExc_RuntimeError,
                    "argonishche._blake2b_type is not connected: use argonishche.blake2b");
    return 0;
}

static void blake2b_dealloc(Blake2bObject *self);

/* The state of the module that made *type* (the blake2b type or a subclass of it), or NULL
 * with an error.  The bases are walked by hand for a subclass (see Blake2bObject.owner); only
 * a type whose dealloc is ours can be one of ours, so no other type is asked for its module
 * (PyType_GetModule raises for a type without one, a cost a subclass would pay on every
 * construction). */
static module_state *state_of_type(PyTypeObject *type) {
    /* The type made from blake2b_spec (each interpreter makes its own): tp_methods is not
     * inherited, so no subclass has ours, and the two calls cost half the walk's four. */
    if (PyType_GetSlot(type, Py_tp_methods) == (void *)blake2b_methods)
        return PyType_GetModuleState(type);
    for (PyTypeObject *t = type; t != NULL; t = PyType_GetSlot(t, Py_tp_base)) {
        if (PyType_GetSlot(t, Py_tp_dealloc) != (void *)blake2b_dealloc) continue;
        PyObject *module = PyType_GetModule(t); /* borrowed */
        if (module == NULL) {
            PyErr_Clear(); /* a C subclass made without a module: look further */
            continue;
        }
        PyModuleDef *def = PyModule_GetDef(module);
        if (def == &module_def || def == &module_def_311) return PyModule_GetState(module);
        if (def == NULL) PyErr_Clear();
    }
    PyErr_SetString(PyExc_TypeError, "not a subclass of argonishche.blake2b");
    return NULL;
}

/* ---- the kernel table ------------------------------------------------------------------- */

/* resolver(backend) -> (table, address); a new reference to the table in *table_out. */
static const void *resolve(module_state *st, PyObject *backend, PyObject **table_out) {
    PyObject *pair = PyObject_CallFunctionObjArgs(st->resolver, backend, NULL);
    if (pair == NULL) return NULL;
    if (!PyTuple_Check(pair) || PyTuple_Size(pair) != 2) {
        Py_DECREF(pair);
        PyErr_SetString(PyExc_SystemError, "blake2b table resolver must return a pair");
        return NULL;
    }
    PyObject *table = PyTuple_GetItem(pair, 0);
    const void *address = PyLong_AsVoidPtr(PyTuple_GetItem(pair, 1));
    if (address == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "blake2b table is NULL");
        Py_DECREF(pair);
        return NULL;
    }
    Py_INCREF(table);
    *table_out = table;
    Py_DECREF(pair);
    return address;
}

/* The table a construction without backend= uses: the pushed one, else (nothing pushed: no
 * registry yet, or none usable) the resolver's answer, whose object goes to *table_out* (the
 * caller releases it once init has read the table). */
static const void *selected_table(module_state *st, PyObject **table_out) {
    if (st->selected != NULL) return st->selected;
    return resolve(st, Py_None, table_out);
}

/* ---- arguments -------------------------------------------------------------------------- */

/* ParameterTypeError("<name> must be <what>, not <type name>"), as argonishche._parameter_checks says it. */
static void type_error(module_state *st, const char *name, const char *what, PyObject *value) {
    PyObject *type_name = PyType_GetName(Py_TYPE(value));
    if (type_name == NULL) return;
    PyErr_Format(st->parameter_type_error, "%s must be %s, not %U", name, what, type_name);
    Py_DECREF(type_name);
}

static int byte_argument(module_state *st, const char *name, PyObject *value, Py_ssize_t max_len, Py_buffer *view) {
    if (PyBytes_CheckExact(value)) { /* as data_buffer: one call, nothing to release */
        char *buf;
        if (PyBytes_AsStringAndSize(value, &buf, &view->len) < 0) return -1;
        view->obj = NULL;
        view->buf = buf;
    } else {
        if (PyUnicode_Check(value)) {
            PyErr_Format(st->parameter_type_error,
                         "%s must be bytes-like, not str (encode it first)", name);
            return -1;
        }
        if (!PyObject_CheckBuffer(value)) {
            type_error(st, name, "bytes-like", value);
            return -1;
        }
        if (PyObject_GetBuffer(value, view, PyBUF_FULL_RO) < 0) return -1;
        if (!PyBuffer_IsContiguous(view, 'C')) {
            PyBuffer_Release(view);
            PyErr_Format(st->parameter_error, "%s must be a C-contiguous buffer", name);
            return -1;
        }
    }
    if (view->len > max_len) {
        PyErr_Format(st->parameter_error, "%s must be 0..%zd bytes long, got %zd", name,
                     max_len, view->len);
        if (view->obj != NULL) PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* *data*'s bytes in *view*; for bytes (immutable) without the buffer protocol, with
 * view->obj NULL: nothing to release. */
static int data_buffer(PyObject *data, Py_buffer *view) {
    if (PyBytes_CheckExact(data)) {
        char *buf;
        if (PyBytes_AsStringAndSize(data, &buf, &view->len) < 0) return -1; /* cannot fail */
        view->obj = NULL;
        view->buf = buf;
        return 0;
    }
    if (PyUnicode_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "Strings must be encoded before hashing");
        return -1;
    }
    if (!PyObject_CheckBuffer(data)) {
        PyErr_SetString(PyExc_TypeError, "object supporting the buffer API required");
        return -1;
    }
    return PyObject_GetBuffer(data, view, PyBUF_SIMPLE);
}

/* An int parameter of hashlib's C-int kind (digest_size, fanout, depth, node_depth,
 * inner_size) in lo..hi: as hashlib, any object with __index__ (but not a bool: a
 * ParameterTypeError, as for every argonishche integer); a value outside C int's range is a
 * ParameterOverflowError (an OverflowError, as hashlib's), one inside it but outside lo..hi a
 * ParameterError (a ValueError). */
static int int_argument(module_state *st, const char *name, PyObject *value, long lo, long hi, long *out) {
    if (PyBool_Check(value) || !PyIndex_Check(value)) {
        char what[64];
        PyOS_snprintf(what, sizeof what, "an int in %ld..%ld", lo, hi);
        type_error(st, name, what, value);
        return -1;
    }
    PyObject *index = PyNumber_Index(value);
    if (index == NULL) return -1;
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (n == -1 && PyErr_Occurred()) {
        Py_DECREF(index);
        return -1;
    }
    if (overflow || n < INT_MIN || n > INT_MAX || n < lo || n > hi) {
        PyErr_Format(overflow || n < INT_MIN || n > INT_MAX ? st->parameter_overflow_error
                                                             : st->parameter_error,
                     "%s must be in %ld..%ld, got %S", name, lo, hi, index);
        Py_DECREF(index);
        return -1;
    }
    Py_DECREF(index);
    *out = (long)n;
    return 0;
}

/* leaf_size (0..2**32-1) and node_offset (0..2**64-1): an int, as hashlib requires (no
 * __index__), and not a bool; negative is a ParameterError (ValueError), too large a
 * ParameterOverflowError (OverflowError), as hashlib's errors are. */
static int unsigned_argument(module_state *st, const char *name, PyObject *value, unsigned long long max,
                             unsigned long long *out) {
    if (PyBool_Check(value) || !PyLong_Check(value)) {
        char what[64];
        PyOS_snprintf(what, sizeof what, "an int in 0..%llu", max);
        type_error(st, name, what, value);
        return -1;
    }
    int negative = PyObject_RichCompareBool(value, st->zero, Py_LT);
    if (negative < 0) return -1;
    if (!negative) {
        unsigned long long n = PyLong_AsUnsignedLongLong(value);
        if (n == (unsigned long long)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
            PyErr_Clear();
        } else if (n <= max) {
            *out = n;
            return 0;
        }
    }
    PyErr_Format(negative ? st->parameter_error : st->parameter_overflow_error,
                 "%s must be in 0..%llu, got %S", name, max, value);
    return -1;
}

/* The tree-hashing arguments (*args*: fanout .. last_node, NULL where not given) into *tree*,
 * from the sequential defaults. */
static int tree_arguments(module_state *st, PyObject *const *args, argonishche_blake2b_tree *tree) {
    static const struct {
        int arg;
        long lo, hi;
    } bytes[] = {{ARG_FANOUT, 0, 255}, {ARG_DEPTH, 1, 255}, {ARG_NODE_DEPTH, 0, 255},
                 {ARG_INNER_SIZE, 0, 64}};
    long values[4] = {1, 1, 0, 0};
    unsigned long long leaf_size = 0, node_offset = 0;
    int last_node = 0;

#define TREE_ARG(arg) args[(arg) - ARG_FANOUT]
    for (int i = 0; i < 4; i++) {
        PyObject *value = TREE_ARG(bytes[i].arg);
        if (value != NULL && int_argument(st, keyword_names[bytes[i].arg], value, bytes[i].lo,
                                          bytes[i].hi, &values[i]) < 0)
            return -1;
    }
    if (TREE_ARG(ARG_LEAF_SIZE) != NULL &&
        unsigned_argument(st, "leaf_size", TREE_ARG(ARG_LEAF_SIZE), 0xFFFFFFFFULL, &leaf_size) < 0)
        return -1;
    if (TREE_ARG(ARG_NODE_OFFSET) != NULL &&
        unsigned_argument(st, "node_offset", TREE_ARG(ARG_NODE_OFFSET), ~0ULL, &node_offset) < 0)
        return -1;
    if (TREE_ARG(ARG_LAST_NODE) != NULL) { /* any object, by its truth value, as hashlib's */
        last_node = PyObject_IsTrue(TREE_ARG(ARG_LAST_NODE));
        if (last_node < 0) return -1;
    }
#undef TREE_ARG
    tree->fanout = (uint8_t)values[0];
    tree->depth = (uint8_t)values[1];
    tree->node_depth = (uint8_t)values[2];
    tree->inner_size = (uint8_t)values[3];
    tree->leaf_size = (uint32_t)leaf_size;
    tree->node_offset = (uint64_t)node_offset;
    tree->last_node = last_node;
    return 0;
}

/* ---- the object ------------------------------------------------------------------------- */

/* Take the object's lock, if it has one (waiting without the GIL). */
static void enter(Blake2bObject *self) {
    if (self->lock != NULL && !PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
}

static void leave(Blake2bObject *self) {
    if (self->lock != NULL) PyThread_release_lock(self->lock);
}

/* Hash *view* into the state; the GIL is released (and the object's lock used) from
 * GIL_MINSIZE bytes on.  *shared* is 0 while no other thread can know the object (tp_new). */
static int hash_buffer(Blake2bObject *self, const Py_buffer *view, int shared) {
    const uint8_t *data = view->buf;
    size_t len = (size_t)view->len;
    if (len < GIL_MINSIZE) {
        enter(self);
        self->owner->core.update(&self->state, data, len);
        leave(self);
        return 0;
    }
    if (!shared) {
        Py_BEGIN_ALLOW_THREADS
        self->owner->core.update(&self->state, data, len);
        Py_END_ALLOW_THREADS
        return 0;
    }
    if (self->lock == NULL) {
        self->lock = PyThread_allocate_lock();
        if (self->lock == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(self->lock, WAIT_LOCK);
    self->owner->core.update(&self->state, data, len);
    PyThread_release_lock(self->lock);
    Py_END_ALLOW_THREADS
    return 0;
}

/* *to* = *from*, in 16-byte pieces: a memcpy of the whole state compiles to rep movs, whose
 * start-up costs more than the copy. */
static inline void copy_state(argonishche_blake2b_state *to, const argonishche_blake2b_state *from) {
    unsigned char *d = (unsigned char *)to;
    const unsigned char *s = (const unsigned char *)from;
    size_t i = 0;
#if defined(__GNUC__)
#pragma GCC unroll 16
#endif
    for (; i + 16 <= sizeof *to; i += 16) memcpy(d + i, s + i, 16);
    if (i < sizeof *to) memcpy(d + i, s + i, sizeof *to - i);
}

/* A new object whose state the caller fills in: for the type itself without tp_alloc's
 * zeroing of the whole object (the state is written at once), for a subclass with its tp_alloc
 * (which may add a __dict__ and more). */
static Blake2bObject *new_object(module_state *st, PyTypeObject *type) {
    Blake2bObject *self;
    if (type == st->type) {
        self = st->free_objects;
        if (self != NULL) {
            st->free_objects = self->next_free;
            st->n_free_objects--;
        } else {
            self = PyObject_Malloc(sizeof(Blake2bObject));
            if (self == NULL) return (Blake2bObject *)PyErr_NoMemory();
        }
        PyObject_Init((PyObject *)self, type); /* a heap type: takes a reference to it */
    } else {
        allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
        self = (Blake2bObject *)alloc(type, 0);
        if (self == NULL) return NULL;
    }
    self->lock = NULL;
    self->pending = NULL;
    self->keyed = 0;
    self->owner = st;
    return self;
}

/* The index of keyword *name* (an interned one first by identity), or -1 (an error set if the
 * comparison failed). */
static int keyword_index(module_state *st, PyObject *name) {
    for (int i = 0; i < N_ARGS; i++)
        if (name == st->keywords[i]) return i;
    if (!PyUnicode_Check(name)) return -1;
    for (int i = 0; i < N_ARGS; i++) {
        int equal = PyUnicode_Compare(name, st->keywords[i]);
        if (equal == -1 && PyErr_Occurred()) return -1;
        if (equal == 0) return i;
    }
    return -1;
}

static void release_all(Py_buffer *views, int n) {
    for (int i = 0; i < n; i++)
        if (views[i].obj != NULL) PyBuffer_Release(&views[i]);
}

static PyObject *blake2b_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    /* Separate variables, not one zeroed array of every argument: a call without keywords
     * stays as cheap as hashlib's (gcc zeroes such an array with rep stos, ~10 ns). */
    PyObject *data = NULL, *digest_size = NULL, *key = NULL, *salt = NULL, *person = NULL,
             *usedforsecurity = NULL, *backend = NULL;
    PyObject *tree_given[N_TREE_ARGS]; /* set (all) once a tree argument is seen */
    Py_buffer views[4]; /* key, salt, person, data */
    long size = 64;
    const void *table = NULL;
    PyObject *table_object = NULL; /* the resolver's table, held until init has read it */
    argonishche_blake2b_tree tree;
    int has_tree = 0;

    module_state *st = state_of_type(type);
    if (st == NULL || !connected(st)) return NULL;
    Py_ssize_t nargs = Py_SIZE(args); /* a tuple's length, without PyTuple_Size's call */
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "blake2b() takes at most 1 positional argument (%zd given)",
                     nargs);
        return NULL;
    }
    if (nargs == 1) data = PyTuple_GetItem(args, 0);
    if (kwargs != NULL) {
        Py_ssize_t pos = 0;
        PyObject *name, *value;
        while (PyDict_Next(kwargs, &pos, &name, &value)) {
            int index = keyword_index(st, name);
            switch (index) {
            case -1:
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_TypeError,
                                 "blake2b() got an unexpected keyword argument '%S'", name);
                return NULL;
            case ARG_DATA:
                if (data != NULL) {
                    PyErr_SetString(PyExc_TypeError,
                                    "blake2b() got multiple values for argument 'data'");
                    return NULL;
                }
                data = value;
                break;
            case ARG_DIGEST_SIZE: digest_size = value; break;
            case ARG_KEY: key = value; break;
            case ARG_SALT: salt = value; break;
            case ARG_PERSON: person = value; break;
            case ARG_USEDFORSECURITY: usedforsecurity = value; break;
            case ARG_BACKEND: backend = value; break;
            default: /* fanout .. last_node */
                if (!has_tree) {
                    for (int i = 0; i < N_TREE_ARGS; i++) tree_given[i] = NULL;
                    has_tree = 1;
                }
                tree_given[index - ARG_FANOUT] = value;
            }
        }
    }
    if (digest_size != NULL && int_argument(st, "digest_size", digest_size, 1, 64, &size) < 0)
        return NULL;
    if (has_tree && tree_arguments(st, tree_given, &tree) < 0) return NULL;
    /* usedforsecurity: accepted and unused, as hashlib's builtin blake2b does (its truth value
     * is taken, so an object whose __bool__ fails fails here too). */
    if (usedforsecurity != NULL && PyObject_IsTrue(usedforsecurity) < 0) return NULL;
    /* The resolver is asked here, before the buffers, so that its errors (an unknown backend,
     * no usable one) come first; the pushed table is read below, just before init. */
    if (backend != NULL && backend != Py_None) {
        table = resolve(st, backend, &table_object);
        if (table == NULL) return NULL;
    } else if (st->selected == NULL) {
        table = resolve(st, Py_None, &table_object);
        if (table == NULL) return NULL;
    }

    for (int i = 0; i < 4; i++) { /* absent: no bytes, nothing to release */
        views[i].obj = NULL;
        views[i].buf = NULL;
        views[i].len = 0;
    }
    if ((key != NULL && byte_argument(st, "key", key, 64, &views[0]) < 0) ||
        (salt != NULL && byte_argument(st, "salt", salt, 16, &views[1]) < 0) ||
        (person != NULL && byte_argument(st, "person", person, 16, &views[2]) < 0) ||
        (data != NULL && data_buffer(data, &views[3]) < 0)) {
        release_all(views, 4);
        Py_XDECREF(table_object);
        return NULL;
    }
    Blake2bObject *self = new_object(st, type);
    if (self == NULL) {
        release_all(views, 4);
        Py_XDECREF(table_object);
        return NULL;
    }
    /* The pushed table, read after the last call that can run Python code (a buffer's
     * __buffer__, a collection in a subclass's tp_alloc, which could push another one or
     * release the pushed object) and used by init at once. */
    if (table == NULL) {
        table = selected_table(st, &table_object);
        if (table == NULL) {
            release_all(views, 4);
            Py_DECREF(self);
            return NULL;
        }
    }
    self->keyed = views[0].len > 0;
    if (size == 64 && !has_tree && views[0].len == 0 && views[1].len == 0 &&
        views[2].len == 0 && table == st->selected) {
        copy_state(&self->state, &st->default_state);
    } else if (st->core.init(&self->state, table, (size_t)size, views[0].buf,
                             (size_t)views[0].len, views[1].buf, (size_t)views[1].len,
                             views[2].buf, (size_t)views[2].len,
                             has_tree ? &tree : NULL) != ARGONISHCHE_OK) {
        release_all(views, 4);
        Py_DECREF(self);
        Py_XDECREF(table_object);
        PyErr_SetString(st->parameter_error, "the C driver refused the BLAKE2b parameters");
        return NULL;
    }
    Py_XDECREF(table_object); /* init has read the table: the state holds its function */
    release_all(views, 3);
    if (data != NULL) {
        hash_buffer(self, &views[3], 0); /* cannot fail when not shared */
        if (views[3].obj != NULL) PyBuffer_Release(&views[3]);
    }
    /* What the Python class kept as its pending bytes, and pickled (never with tree
     * parameters: the pickle would lose them). */
    if (views[0].len == 0 && views[1].len == 0 && views[2].len == 0 && !has_tree &&
        (backend == NULL || backend == Py_None) && (data == NULL || PyBytes_CheckExact(data))) {
        self->pending = data != NULL ? data : st->empty_bytes;
        Py_INCREF(self->pending);
    }
    return (PyObject *)self;
}

static void blake2b_dealloc(Blake2bObject *self) {
    PyTypeObject *type = Py_TYPE((PyObject *)self);
    /* The owner's state is alive: the object still holds its type (released last). */
    if (self->keyed) self->owner->core.wipe(&self->state, sizeof self->state);
    if (self->lock != NULL) PyThread_free_lock(self->lock);
    Py_XDECREF(self->pending);
    module_state *st = self->owner;
    if (type == st->type) { /* new_object's PyObject_Malloc */
        if (st->n_free_objects < FREE_OBJECTS_MAX) {
            self->next_free = st->free_objects;
            st->free_objects = self;
            st->n_free_objects++;
        } else {
            PyObject_Free(self);
        }
    } else {
        freefunc free_object = (freefunc)PyType_GetSlot(type, Py_tp_free);
        free_object(self);
    }
    Py_DECREF(type);
}

PyDoc_STRVAR(update_doc,
             "update($self, data, /)\n--\n\n"
             "Hash more bytes; any C-contiguous bytes-like object (str must be encoded first).");

static PyObject *blake2b_update(Blake2bObject *self, PyObject *data) {
    Py_buffer view;
    if (data_buffer(data, &view) < 0) return NULL;
    Py_CLEAR(self->pending);
    int status = hash_buffer(self, &view, 1);
    if (view.obj != NULL) PyBuffer_Release(&view);
    if (status < 0) return NULL;
    Py_RETURN_NONE;
}

static size_t final(Blake2bObject *self, uint8_t out[64]) {
    enter(self);
    self->owner->core.final(&self->state, out);
    leave(self);
    return self->state.digest_size;
}

PyDoc_STRVAR(digest_doc, "digest($self, /)\n--\n\n"
                         "The digest so far; hashing may continue afterwards.");

static PyObject *blake2b_digest(Blake2bObject *self, PyObject *unused) {
    uint8_t out[64];
    size_t n = final(self, out);
    (void)unused;
    return PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)n);
}

PyDoc_STRVAR(hexdigest_doc, "hexdigest($self, /)\n--\n\nThe digest so far, as hexadecimal.");

static PyObject *blake2b_hexdigest(Blake2bObject *self, PyObject *unused) {
    static const char hex[] = "0123456789abcdef";
    uint8_t out[64];
    char text[128];
    size_t n = final(self, out);
    (void)unused;
    for (size_t i = 0; i < n; i++) {
        text[2 * i] = hex[out[i] >> 4];
        text[2 * i + 1] = hex[out[i] & 15];
    }
    return PyUnicode_FromStringAndSize(text, (Py_ssize_t)(2 * n));
}

PyDoc_STRVAR(copy_doc, "copy($self, /)\n--\n\nAn independent object with the same state.");

static PyObject *blake2b_copy(Blake2bObject *self, PyObject *unused) {
    Blake2bObject *clone = new_object(self->owner, Py_TYPE((PyObject *)self));
    (void)unused;
    if (clone == NULL) return NULL;
    enter(self); /* no update half done in the state copied */
    copy_state(&clone->state, &self->state);
    clone->keyed = self->keyed;
    clone->pending = self->pending; /* read under the lock: it goes before any update */
    Py_XINCREF(clone->pending);
    leave(self);
    return (PyObject *)clone;
}

/* Pickling, as the Python class allowed it: an object made from bytes alone (no key, salt,
 * person, tree parameter or backend) and not updated since pickles as its data and digest
 * size; any other refuses, as hashlib's do, since its state may hold a key. */
static PyObject *blake2b_reduce(Blake2bObject *self, PyObject *unused) {
    (void)unused;
    if (self->pending == NULL) {
        PyObject *type_name = PyType_GetName(Py_TYPE((PyObject *)self));
        if (type_name != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "cannot pickle %U object (only an unkeyed blake2b made from bytes and "
                         "not updated since can be)",
                         type_name);
            Py_DECREF(type_name);
        }
        return NULL;
    }
    if (self->state.digest_size == 64)
        return Py_BuildValue("O(O)", (PyObject *)Py_TYPE((PyObject *)self), self->pending);
    PyObject *copyreg = PyImport_ImportModule("copyreg");
    if (copyreg == NULL) return NULL;
    PyObject *newobj_ex = PyObject_GetAttrString(copyreg, "__newobj_ex__");
    Py_DECREF(copyreg);
    if (newobj_ex == NULL) return NULL;
    PyObject *result = Py_BuildValue("N(O(O){s:n})", newobj_ex, (PyObject *)Py_TYPE((PyObject *)self),
                                     self->pending, "digest_size",
                                     (Py_ssize_t)self->state.digest_size);
    return result;
}

static PyObject *get_digest_size(Blake2bObject *self, void *closure) {
    (void)closure;
    return PyLong_FromSize_t(self->state.digest_size);
}

static PyMethodDef blake2b_methods[N_METHODS + 1] = {
    {"update", (PyCFunction)blake2b_update, METH_O, update_doc},
    {"digest", (PyCFunction)blake2b_digest, METH_NOARGS, digest_doc},
    {"hexdigest", (PyCFunction)blake2b_hexdigest, METH_NOARGS, hexdigest_doc},
    {"copy", (PyCFunction)blake2b_copy, METH_NOARGS, copy_doc},
    {"__copy__", (PyCFunction)blake2b_copy, METH_NOARGS, copy_doc},
    {"__reduce__", (PyCFunction)blake2b_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef blake2b_getset[] = {
    {"digest_size", (getter)get_digest_size, NULL, "The digest's length in bytes (1..64).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(blake2b_doc,
             "blake2b(data=b'', *, digest_size=64, key=b'', salt=b'', person=b'', fanout=1, "
             "depth=1, leaf_size=0, node_offset=0, node_depth=0, inner_size=0, "
             "last_node=False, usedforsecurity=True, backend=None)\n--\n\n"
             "BLAKE2b (RFC 7693) with 1..64-byte digests, optional key, salt and "
             "personalization, and the tree-hashing parameters of hashlib.blake2b.");

static PyType_Slot blake2b_slots[] = {
    {Py_tp_new, blake2b_new},
    {Py_tp_dealloc, blake2b_dealloc},
    {Py_tp_methods, blake2b_methods},
    {Py_tp_getset, blake2b_getset},
    {Py_tp_doc, (void *)blake2b_doc},
    {0, NULL},
};

static PyType_Spec blake2b_spec = {
    "argonishche.blake2b",
    sizeof(Blake2bObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_IMMUTABLETYPE, /* as hashlib's */
    blake2b_slots,
};

/* ---- the module ------------------------------------------------------------------------- */

PyDoc_STRVAR(connect_doc,
             "connect(functions, resolver, parameter_error, parameter_type_error, "
             "parameter_overflow_error, /)\n--\n\n"
             "Called once by argonishche._blake2: the addresses of the core's "
             "argonishche_blake2b_init_tree, argonishche_blake2b_update, _final and "
             "argonishche_secure_wipe; resolver(backend) -> (table, address); the three "
             "exception classes.  Forgets the table pushed before.");

static PyObject *connect(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    module_state *st = PyModule_GetState(module);
    void *functions[4];
    if (st == NULL) return NULL;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "connect() takes 5 arguments");
        return NULL;
    }
    if (!PyTuple_Check(args[0]) || PyTuple_Size(args[0]) != 4 || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "connect(): bad arguments");
        return NULL;
    }
    for (int i = 0; i < 4; i++) {
        functions[i] = PyLong_AsVoidPtr(PyTuple_GetItem(args[0], i));
        if (functions[i] == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "connect(): NULL function");
            return NULL;
        }
    }
    /* Again when argonishche._blake2 is imported anew in this interpreter (this module, kept
     * in sys.modules, outlives it): the new resolver and classes replace the old, and the
     * table pushed for the old registry module is forgotten (the new one pushes its own). */
    PyObject *old[5] = {st->resolver, st->parameter_error, st->parameter_type_error,
                        st->parameter_overflow_error, st->selected_table};
    st->resolver = Py_NewRef(args[1]);
    st->parameter_error = Py_NewRef(args[2]);
    st->parameter_type_error = Py_NewRef(args[3]);
    st->parameter_overflow_error = Py_NewRef(args[4]);
    st->selected_table = NULL;
    st->selected = NULL;
    for (int i = 0; i < 5; i++) Py_XDECREF(old[i]);
    st->core.update = (update_fn)functions[1];
    st->core.final = (final_fn)functions[2];
    st->core.wipe = (wipe_fn)functions[3];
    st->core.init = (init_fn)functions[0]; /* last: connected() tests it */
    Py_RETURN_NONE;
}

PyDoc_STRVAR(selected_address_doc,
             "selected_table_address($module, /)\n--\n\n"
             "The address of the kernel table the next blake2b() without backend= uses.");

static PyObject *selected_table_address(PyObject *module, PyObject *unused) {
    module_state *st = PyModule_GetState(module);
    PyObject *table_object = NULL;
    (void)unused;
    if (st == NULL || !connected(st)) return NULL;
    const void *table = selected_table(st, &table_object);
    Py_XDECREF(table_object);
    return table == NULL ? NULL : PyLong_FromVoidPtr((void *)table);
}

PyDoc_STRVAR(set_selected_doc,
             "set_selected($module, table, address, /)\n--\n\n"
             "The process registry's push of its selected BLAKE2b table (the table object, kept "
             "alive, and its address), or of None, None: nothing usable or no registry, so "
             "constructions ask the resolver.");

static PyObject *set_selected(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    module_state *st = PyModule_GetState(module);
    if (st == NULL) return NULL;
    /* Cleared (an interpreter finalizing, whose registry may still reset): no object can be
     * made any more, so there is nothing to keep; an error would surface from reset(). */
    if (st->core.init == NULL) Py_RETURN_NONE;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "set_selected() takes 2 arguments");
        return NULL;
    }
    const void *address = NULL;
    if (args[1] != Py_None) {
        address = PyLong_AsVoidPtr(args[1]);
        if (address == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "set_selected(): NULL table");
            return NULL;
        }
        /* The default state is made before anything is changed, so that a refusal leaves the
         * last push in force; both change together, with no Python code in between. */
        argonishche_blake2b_state fresh = {0}; /* no stack bytes carried into objects */
        if (st->core.init(&fresh, address, 64, NULL, 0, NULL, 0, NULL, 0, NULL) !=
            ARGONISHCHE_OK) {
            PyErr_SetString(PyExc_SystemError, "blake2b init refused the default parameters");
            return NULL;
        }
        copy_state(&st->default_state, &fresh);
    }
    PyObject *old = st->selected_table;
    st->selected_table = address == NULL ? NULL : Py_NewRef(args[0]);
    st->selected = address;
    Py_XDECREF(old); /* last: its release may run Python code */
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"connect", (PyCFunction)(void (*)(void))connect, METH_FASTCALL, connect_doc},
    {"selected_table_address", selected_table_address, METH_NOARGS, selected_address_doc},
    {"set_selected", (PyCFunction)(void (*)(void))set_selected, METH_FASTCALL, set_selected_doc},
    {NULL, NULL, 0, NULL},
};

static int intern(PyObject **where, const char *text) {
    *where = PyUnicode_InternFromString(text);
    return *where == NULL ? -1 : 0;
}

/* type.name = value in the dict of the (immutable) type itself: see module_exec. */
static int set_type_attribute(PyObject *type, const char *name, PyObject *value) {
    PyObject *key = PyUnicode_InternFromString(name);
    if (key == NULL) return -1;
    int status = PyObject_GenericSetAttr(type, key, value);
    Py_DECREF(key);
    return status;
}

/* Run in every interpreter that imports the module, each time with a new module and a zeroed
 * state (m_clear/m_free release what a failed run left). */
static int module_exec(PyObject *module) {
    module_state *st = PyModule_GetState(module);
    if (st == NULL) return -1;
    if (intern(&st->s_blake2b, "blake2b") < 0) return -1;
    for (int i = 0; i < N_ARGS; i++)
        if (intern(&st->keywords[i], keyword_names[i]) < 0) return -1;
    st->empty_bytes = PyBytes_FromStringAndSize("", 0);
    if (st->empty_bytes == NULL) return -1;
    st->zero = PyLong_FromLong(0);
    if (st->zero == NULL) return -1;
    /* The type holds the module (PyType_GetModule), the state holds the type: a cycle that
     * m_traverse shows the collector. */
    PyObject *type = PyType_FromModuleAndSpec(module, &blake2b_spec, NULL);
    if (type == NULL) return -1;
    st->type = (PyTypeObject *)type; /* the reference from PyType_FromModuleAndSpec */
    /* hashlib.blake2b's class attributes (name and block_size too, as the Python class had).
     * The type is immutable, as hashlib's (its setattr refuses), so they go into its dict
     * through the generic setattr (a type's dict is at its tp_dictoffset), before anything
     * can have looked them up, and PyType_Modified drops any cached lookup all the same. */
    static const struct {
        const char *name;
        long value;
    } constants[] = {{"block_size", 128}, {"SALT_SIZE", 16}, {"PERSON_SIZE", 16},
                     {"MAX_KEY_SIZE", 64}, {"MAX_DIGEST_SIZE", 64}};
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++) {
        PyObject *value = PyLong_FromLong(constants[i].value);
        if (value == NULL || set_type_attribute(type, constants[i].name, value) < 0) {
            Py_XDECREF(value);
            return -1;
        }
        Py_DECREF(value);
    }
    if (set_type_attribute(type, "name", st->s_blake2b) < 0) return -1;
    PyType_Modified((PyTypeObject *)type);
    return PyModule_AddObjectRef(module, "blake2b", type);
}

static int module_traverse(PyObject *module, visitproc visit, void *arg) {
    module_state *st = PyModule_GetState(module);
    if (st == NULL) return 0;
    Py_VISIT(st->type);
    Py_VISIT(st->resolver);
    Py_VISIT(st->parameter_error);
    Py_VISIT(st->parameter_type_error);
    Py_VISIT(st->parameter_overflow_error);
    Py_VISIT(st->selected_table);
    return 0;
}

/* The objects; of the core's functions init only, so that a construction after this is "not
 * connected" (the type outliving its module's objects) and never follows a NULL: an object
 * that outlives this still updates, digests and is wiped (its type holds the module, and so
 * the state's memory). */
static int module_clear(PyObject *module) {
    module_state *st = PyModule_GetState(module);
    if (st == NULL) return 0;
    st->core.init = NULL;
    Py_CLEAR(st->type);
    Py_CLEAR(st->resolver);
    Py_CLEAR(st->parameter_error);
    Py_CLEAR(st->parameter_type_error);
    Py_CLEAR(st->parameter_overflow_error);
    st->selected = NULL;
    Py_CLEAR(st->selected_table);
    while (st->free_objects != NULL) {
        Blake2bObject *next = st->free_objects->next_free;
        PyObject_Free(st->free_objects);
        st->free_objects = next;
    }
    st->n_free_objects = 0;
    Py_CLEAR(st->s_blake2b);
    Py_CLEAR(st->empty_bytes);
    Py_CLEAR(st->zero);
    for (int i = 0; i < N_ARGS; i++) Py_CLEAR(st->keywords[i]);
    return 0;
}

static void module_free(void *module) {
    module_clear((PyObject *)module);
}

/* Py_mod_multiple_interpreters (3.12's stable ABI, absent from 3.11's headers): the module
 * keeps nothing per process, so it supports an interpreter with its own GIL.  The value is
 * part of 3.12's stable ABI; 3.11 refuses a slot it does not know, so PyInit picks the
 * definition with it only where the running CPython has it (Py_Version). */
#ifndef Py_mod_multiple_interpreters
#define Py_mod_multiple_interpreters 3
#define Py_MOD_PER_INTERPRETER_GIL_SUPPORTED ((void *)2)
#endif

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
    {0, NULL},
};

static PyModuleDef_Slot module_slots_311[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

PyDoc_STRVAR(module_doc, "The blake2b type in C (argonishche.blake2b); connected to the core "
                         "by argonishche._blake2.");

static PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "argonishche._blake2b_type", module_doc, sizeof(module_state),
    module_methods, module_slots, module_traverse, module_clear, module_free,
};

static PyModuleDef module_def_311 = {
    PyModuleDef_HEAD_INIT, "argonishche._blake2b_type", module_doc, sizeof(module_state),
    module_methods, module_slots_311, module_traverse, module_clear, module_free,
};

/* Multi-phase initialisation (PEP 489): what PyInit returns is only the definition; each
 * interpreter's import makes its own module and runs module_exec on it. */
PyMODINIT_FUNC PyInit__blake2b_type(void) {
    return PyModuleDef_Init(Py_Version >= 0x030C0000 ? &module_def : &module_def_311);
}
