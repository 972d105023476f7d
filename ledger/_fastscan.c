/* Optional accelerator for full verification: frame checks, CRC-32 and RFC 6962 hashing in C.
 *
 * ledger/segments.py defines the frame format and ledger/fastscan.py the Python reference that
 * this module must agree with (tests/test_fastscan.py checks both on the same bytes). */
#define PY_SSIZE_T_CLEAN
#define OPENSSL_SUPPRESS_DEPRECATED
#include <Python.h>
#include <openssl/sha.h>
#include <string.h>
#include <zlib.h>

#define HEADER 16
#define OVERHEAD 20
#define COMMIT 0x80000000u
#define LENGTH_MASK 0x7FFFFFFFu

static uint32_t le32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t le64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Checks the frame at `off`: its length, CRC-32, trailing length and entry index. Returns NULL and
 * sets *stop (where its payload ends) and *word when it is well formed, else the reason. */
static const char *check_frame(const unsigned char *data, Py_ssize_t off, Py_ssize_t end, unsigned long long expected,
                               Py_ssize_t *stop, uint32_t *word, char *message, size_t size) {
    if (end - off < OVERHEAD) { snprintf(message, size, "torn frame: %zd bytes left, a frame needs at least %d", end - off, OVERHEAD); return message; }
    *word = le32(data + off);
    uint32_t crc = le32(data + off + 4);
    uint64_t index = le64(data + off + 8);
    Py_ssize_t length = *word & LENGTH_MASK;
    *stop = off + HEADER + length;
    if (*stop + 4 > end) { snprintf(message, size, "torn frame: header says %zd payload bytes, only %zd follow", length, end - off - OVERHEAD); return message; }
    uLong c = crc32(0L, data + off, 4);
    c = crc32(c, data + off + 8, 8 + (uInt)length);
    if ((uint32_t)c != crc) return "CRC mismatch: the frame's bytes were changed";
    if (le32(data + *stop) != *word) return "trailing length differs from the header";
    if (index != expected) { snprintf(message, size, "frame says it holds entry %llu, expected entry %llu here", (unsigned long long)index, expected); return message; }
    return NULL;
}

/* scan(data, first_index) -> (leaves, count, last_commit, commit_end, error_offset, error)
 * leaves: count*32 bytes of leaf hashes; error_offset -1 when every frame is well formed. */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer buf;
    unsigned long long first;
    if (!PyArg_ParseTuple(args, "y*K", &buf, &first)) return NULL;
    const unsigned char *data = buf.buf;
    Py_ssize_t end = buf.len, off = 0, count = 0, last_commit = 0, commit_end = 0, cap = 1024;
    unsigned char *leaves = PyMem_Malloc(cap * 32);
    const char *error = NULL;
    char message[160];
    if (!leaves) { PyBuffer_Release(&buf); return PyErr_NoMemory(); }
    Py_BEGIN_ALLOW_THREADS
    while (off < end) {
        Py_ssize_t stop;
        uint32_t word;
        error = check_frame(data, off, end, first + (unsigned long long)count, &stop, &word, message, sizeof message);
        if (error) break;
        Py_ssize_t length = stop - off - HEADER;
        if (count == cap) {
            unsigned char *grown = NULL;
            Py_BLOCK_THREADS
            grown = PyMem_Realloc(leaves, cap * 2 * 32);
            Py_UNBLOCK_THREADS
            if (!grown) { error = "out of memory"; break; }
            leaves = grown; cap *= 2;
        }
        SHA256_CTX ctx;
        static const unsigned char zero = 0;
        SHA256_Init(&ctx); SHA256_Update(&ctx, &zero, 1); SHA256_Update(&ctx, data + off + HEADER, length);
        SHA256_Final(leaves + count * 32, &ctx);
        count++;
        off = stop + 4;
        if (word & COMMIT) { last_commit = count; commit_end = off; }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    PyObject *blob = PyBytes_FromStringAndSize((const char *)leaves, count * 32);
    PyMem_Free(leaves);
    if (!blob) return NULL;
    return Py_BuildValue("(NnnnnO)", blob, count, last_commit, commit_end, error ? off : (Py_ssize_t)-1,
                         error ? PyUnicode_FromString(error) : Py_NewRef(Py_None));
}

/* extend(stack, size, leaves) -> size: appends leaf hashes to a compact range (a list of
 * bytes, the right frontier of the tree), merging completed subtrees as CompactRange.append does. */
static PyObject *extend(PyObject *self, PyObject *args) {
    PyObject *stack;
    unsigned long long size;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "O!Ky*", &PyList_Type, &stack, &size, &buf)) return NULL;
    Py_ssize_t n = buf.len / 32, depth = PyList_GET_SIZE(stack);
    unsigned char (*frontier)[32] = PyMem_Malloc((depth + 65) * 32);
    if (!frontier) { PyBuffer_Release(&buf); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < depth; i++) {
        PyObject *item = PyList_GET_ITEM(stack, i);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) != 32) { PyMem_Free(frontier); PyBuffer_Release(&buf); PyErr_SetString(PyExc_ValueError, "stack holds 32-byte hashes"); return NULL; }
        memcpy(frontier[i], PyBytes_AS_STRING(item), 32);
    }
    const unsigned char *leaves = buf.buf;
    unsigned char node[65];
    node[0] = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char cur[32];
        memcpy(cur, leaves + i * 32, 32);
        for (unsigned long long m = size; m & 1; m >>= 1) {
            memcpy(node + 1, frontier[--depth], 32);
            memcpy(node + 33, cur, 32);
            SHA256(node, 65, cur);
        }
        memcpy(frontier[depth++], cur, 32);
        size++;
    }
    PyBuffer_Release(&buf);
    PyObject *fresh = PyList_New(depth);
    for (Py_ssize_t i = 0; fresh && i < depth; i++) PyList_SET_ITEM(fresh, i, PyBytes_FromStringAndSize((const char *)frontier[i], 32));
    PyMem_Free(frontier);
    if (!fresh) return NULL;
    if (PyList_SetSlice(stack, 0, PyList_GET_SIZE(stack), fresh) < 0) { Py_DECREF(fresh); return NULL; }
    Py_DECREF(fresh);
    return PyLong_FromUnsignedLongLong(size);
}

/* payloads(data, first_index) -> (list of payload bytes, last_commit, error_offset, error)
 * Checks frames as scan() does and returns every well-formed frame's payload; the caller keeps
 * those up to last_commit. */
static PyObject *payloads(PyObject *self, PyObject *args) {
    Py_buffer buf;
    unsigned long long first;
    if (!PyArg_ParseTuple(args, "y*K", &buf, &first)) return NULL;
    const unsigned char *data = buf.buf;
    Py_ssize_t end = buf.len, off = 0, count = 0, last_commit = 0;
    const char *error = NULL;
    char message[160];
    PyObject *out = PyList_New(0);
    while (out && off < end) {
        Py_ssize_t stop;
        uint32_t word;
        error = check_frame(data, off, end, first + (unsigned long long)count, &stop, &word, message, sizeof message);
        if (error) break;
        Py_ssize_t length = stop - off - HEADER;
        PyObject *item = PyBytes_FromStringAndSize((const char *)data + off + HEADER, length);
        if (!item || PyList_Append(out, item) < 0) { Py_XDECREF(item); Py_CLEAR(out); break; }
        Py_DECREF(item);
        count++;
        off = stop + 4;
        if (word & COMMIT) last_commit = count;
    }
    PyBuffer_Release(&buf);
    if (!out) return NULL;
    return Py_BuildValue("(NnnO)", out, last_commit, error ? off : (Py_ssize_t)-1,
                         error ? PyUnicode_FromString(error) : Py_NewRef(Py_None));
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Checks every frame of a segment's bytes and returns their leaf hashes."},
    {"payloads", payloads, METH_VARARGS, "Checks every frame of a segment's bytes and returns their payloads."},
    {"extend", extend, METH_VARARGS, "Appends leaf hashes to a compact range."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", "Frame scanning and Merkle hashing in C.", -1, methods};

PyMODINIT_FUNC PyInit__fastscan(void) { return PyModule_Create(&module); }
