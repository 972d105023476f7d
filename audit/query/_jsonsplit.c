/* The audit's JSON splitter, in C: the projection encodes a task's facts records with one msgspec
 * call and splits the array here, about a third of what one encoder call per record costs
 * (bench/audit.py). audit/query/jsonsplit.py holds the pure-Python reference, and
 * tests/test_jsonsplit.py holds the two to the same answers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* split(array) -> (data, ends): the elements of a JSON array, back to back in `data`, element i
 * being data[ends[i]:ends[i + 1]] (`ends` native int64): the inverse of gather. The audit encodes
 * a task's facts records with one call and splits them here, which is far cheaper than one encoder
 * call per record. It tracks strings (with their escapes) and nesting, not the grammar: the array
 * is msgspec's output, compact. Anything that is not an array is refused. */
enum { PLAIN, QUOTE, OPEN, CLOSE, COMMA, SPACE };
static unsigned char json_class[256];

static void json_class_init(void) {
    json_class['"'] = QUOTE;
    json_class['{'] = json_class['['] = OPEN;
    json_class['}'] = json_class[']'] = CLOSE;
    json_class[','] = COMMA;
    json_class[' '] = json_class['\n'] = json_class['\r'] = json_class['\t'] = SPACE;
}

/* Returns the end of the string that opens at p (just past its closing quote), or NULL. */
static const unsigned char *string_end(const unsigned char *p, const unsigned char *end) {
    for (p++; p < end; p++) {
        if (*p == '"') return p + 1;
        if (*p == '\\') p++;
    }
    return NULL;
}

static PyObject *split(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
    const unsigned char *p = buf.buf, *end = p + buf.len, *start = NULL;
    const char *error = NULL;
    PyObject *data = NULL, *ends = NULL;
    Py_ssize_t cap = 1024, n = 0;
    int64_t held = 0, depth = 0, *bounds;
    while (p < end && json_class[*p] == SPACE) p++;
    if (p == end || *p != '[') { error = "not a JSON array"; goto done; }
    data = PyBytes_FromStringAndSize(NULL, buf.len);
    ends = PyBytes_FromStringAndSize(NULL, cap * (Py_ssize_t)sizeof(int64_t));
    if (!data || !ends) goto done;
    char *out = PyBytes_AS_STRING(data);
    bounds = (int64_t *)PyBytes_AS_STRING(ends);
    bounds[0] = 0;
    for (p++;; p++) {
        if (!start && p < end && json_class[*p] == PLAIN) start = p; /* a number, true, false or null */
        while (p < end && json_class[*p] == PLAIN) p++;
        if (p >= end) { error = "a JSON array that does not end"; goto done; }
        unsigned char c = *p, kind = json_class[c];
        if (kind == QUOTE) {
            if (!start) start = p;
            if (!(p = string_end(p, end))) { error = "a JSON array that does not end"; goto done; }
            p--;
        } else if (kind == OPEN) {
            if (!start) start = p;
            depth++;
        } else if (kind == CLOSE && depth > 0) {
            depth--;
        } else if ((kind == COMMA || kind == CLOSE) && depth == 0) {
            if (!start) {
                if (kind == CLOSE && n == 0) break; /* [] */
                error = "an empty element in a JSON array";
                goto done;
            }
            const unsigned char *last = p;
            while (json_class[last[-1]] == SPACE) last--;
            memcpy(out + held, start, (size_t)(last - start));
            held += last - start;
            if (++n == cap) {
                cap *= 2;
                if (_PyBytes_Resize(&ends, cap * (Py_ssize_t)sizeof(int64_t)) < 0) goto done;
                bounds = (int64_t *)PyBytes_AS_STRING(ends);
            }
            bounds[n] = held;
            start = NULL;
            if (kind == CLOSE) break;
        }
        /* commas inside an element and spaces need nothing */
    }
    if (_PyBytes_Resize(&data, held) < 0 || _PyBytes_Resize(&ends, (n + 1) * (Py_ssize_t)sizeof(int64_t)) < 0) goto done;
    PyBuffer_Release(&buf);
    return Py_BuildValue("(NN)", data, ends);
done:
    if (error) PyErr_SetString(PyExc_ValueError, error);
    Py_XDECREF(data);
    Py_XDECREF(ends);
    PyBuffer_Release(&buf);
    return NULL;
}

static PyMethodDef methods[] = {
    {"split", split, METH_VARARGS, "Splits a JSON array into its elements, back to back."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jsonsplit", "Splits a JSON array into its elements, in C.", -1, methods};

PyMODINIT_FUNC PyInit__jsonsplit(void) {
    json_class_init();
    return PyModule_Create(&module);
}
