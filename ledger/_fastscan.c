/* Optional accelerator for full verification: frame checks, CRC-32 and RFC 6962 hashing in C.
 *
 * ledger/segments.py defines the frame format and ledger/fastscan.py the Python reference that
 * this module must agree with (tests/test_fastscan.py checks both on the same bytes). */
#define PY_SSIZE_T_CLEAN
#define OPENSSL_SUPPRESS_DEPRECATED
#include <Python.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define HEADER 16
#define OVERHEAD 20
#define COMMIT 0x80000000u
#define LENGTH_MASK 0x7FFFFFFFu

static uint32_t le32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t le64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* CRC-32 (zlib's: reflected polynomial 0xEDB88320) continued from `crc` over `n` bytes. zlib's
 * own code runs at about 1.5 GB/s on frames of a few hundred bytes, a third of the scan; where the
 * CPU has carry-less multiplication, runs of 16 bytes are folded with PCLMULQDQ instead, after
 * "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al.,
 * Intel, 2009), as Chromium's zlib does. tests/test_fastscan.py checks it against zlib. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define FOLD_MIN 64

__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_fold(const unsigned char *buf, size_t len, uint32_t crc) { /* len ≥ 64, a multiple of 16; crc not inverted */
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8;
    x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = k1k2;
    buf += 64; len -= 64;
    while (len >= 64) { /* four folds in parallel */
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00); x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00); x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11); x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11); x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(buf + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(buf + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(buf + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(buf + 0x30)));
        buf += 64; len -= 64;
    }
    x0 = k3k4; /* fold the four into one */
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00); x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00); x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00); x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
    while (len >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)buf);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00); x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buf += 16; len -= 16;
    }
    /* 128 bits to 64, then Barrett reduction to 32 */
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x0 = k5k0;
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, x0, 0x00), x2);
    x0 = poly;
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

static int fold_ok = -1; /* set once by crc32_any before threads run it */

static void crc32_init(void) {
    __builtin_cpu_init();
    fold_ok = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

static uint32_t crc32_any(uint32_t crc, const unsigned char *buf, size_t len) {
    if (fold_ok && len >= FOLD_MIN) {
        size_t bulk = len & ~(size_t)15;
        crc = ~crc32_fold(buf, bulk, ~crc);
        buf += bulk; len -= bulk;
    }
    return (uint32_t)crc32(crc, buf, (uInt)len);
}
#else
static void crc32_init(void) {}
static uint32_t crc32_any(uint32_t crc, const unsigned char *buf, size_t len) { return (uint32_t)crc32(crc, buf, (uInt)len); }
#endif

/* crc32(data, value=0) -> int: as zlib.crc32, by the scanner's code (for tests). */
static PyObject *py_crc32(PyObject *self, PyObject *args) {
    Py_buffer buf;
    unsigned int value = 0;
    if (!PyArg_ParseTuple(args, "y*|I", &buf, &value)) return NULL;
    uint32_t c = crc32_any(value, buf.buf, (size_t)buf.len);
    PyBuffer_Release(&buf);
    return PyLong_FromUnsignedLong(c);
}

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
    uint32_t c = (uint32_t)crc32(0L, data + off, 4);
    c = crc32_any(c, data + off + 8, 8 + (size_t)length);
    if (c != crc) return "CRC mismatch: the frame's bytes were changed";
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
    unsigned char *leaves = malloc(cap * 32);
    const char *error = NULL;
    char message[160];
    int oom = !leaves;
    Py_BEGIN_ALLOW_THREADS
    while (!oom && off < end) {
        Py_ssize_t stop;
        uint32_t word;
        error = check_frame(data, off, end, first + (unsigned long long)count, &stop, &word, message, sizeof message);
        if (error) break;
        Py_ssize_t length = stop - off - HEADER;
        if (count == cap) {
            unsigned char *grown = realloc(leaves, cap * 2 * 32);
            if (!grown) { oom = 1; break; }
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
    if (oom) { free(leaves); return PyErr_NoMemory(); }
    PyObject *blob = PyBytes_FromStringAndSize((const char *)leaves, count * 32);
    free(leaves);
    if (!blob) return NULL;
    return Py_BuildValue("(NnnnnO)", blob, count, last_commit, commit_end, error ? off : (Py_ssize_t)-1,
                         error ? PyUnicode_FromString(error) : Py_NewRef(Py_None));
}

/* RFC 6962 node hash SHA-256(0x01 ‖ left ‖ right) of two 32-byte hashes: the 65 bytes and their
 * padding are exactly two SHA-256 blocks, compressed directly (SHA256() in OpenSSL 3 looks its
 * algorithm up on every call, which costs more than the hashing). */
static void node_hash(const unsigned char *left, const unsigned char *right, unsigned char *out) {
    unsigned char block[128] = {0};
    block[0] = 1;
    memcpy(block + 1, left, 32);
    memcpy(block + 33, right, 32);
    block[65] = 0x80;
    block[126] = 0x02; block[127] = 0x08; /* 65 bytes = 520 bits, big-endian */
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Transform(&ctx, block);
    SHA256_Transform(&ctx, block + 64);
    for (int i = 0; i < 8; i++) {
        uint32_t h = ctx.h[i];
        out[4 * i] = (unsigned char)(h >> 24); out[4 * i + 1] = (unsigned char)(h >> 16);
        out[4 * i + 2] = (unsigned char)(h >> 8); out[4 * i + 3] = (unsigned char)h;
    }
}

/* The root of the tree whose right frontier is `frontier[0..depth)`, as CompactRange.root. */
static void frontier_root(unsigned char (*frontier)[32], Py_ssize_t depth, unsigned char *out) {
    static const unsigned char empty[32] = {
        0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
        0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55};
    if (depth == 0) { memcpy(out, empty, 32); return; }
    unsigned char node[32];
    memcpy(node, frontier[depth - 1], 32);
    for (Py_ssize_t i = depth - 2; i >= 0; i--) node_hash(frontier[i], node, node);
    memcpy(out, node, 32);
}

/* Appends `n` leaf hashes to the frontier, writing the root to `roots` each time the tree reaches
 * one of the `k` ascending sizes in `cuts` (checked by the caller to lie in [size, size + n]). */
static void grow(unsigned char (*frontier)[32], Py_ssize_t *depth, unsigned long long *size, const unsigned char *leaves,
                 Py_ssize_t n, const unsigned long long *cuts, Py_ssize_t k, unsigned char *roots) {
    Py_ssize_t d = *depth, c = 0;
    unsigned long long s = *size;
    for (Py_ssize_t i = 0; i <= n; i++) {
        for (; c < k && cuts[c] == s; c++) frontier_root(frontier, d, roots + 32 * c);
        if (i == n) break;
        unsigned char cur[32];
        memcpy(cur, leaves + i * 32, 32);
        for (unsigned long long m = s; m & 1; m >>= 1) node_hash(frontier[--d], cur, cur);
        memcpy(frontier[d++], cur, 32);
        s++;
    }
    *depth = d;
    *size = s;
}

/* Shared by extend() and extend_roots(): grows the compact range `stack` (a list of 32-byte
 * hashes, the right frontier of the tree) by the leaf hashes in `buf`, with the GIL released. */
static PyObject *grow_stack(PyObject *stack, unsigned long long *size, Py_buffer *buf, const unsigned long long *cuts,
                            Py_ssize_t k, unsigned char *roots) {
    Py_ssize_t n = buf->len / 32, depth = PyList_GET_SIZE(stack);
    if (buf->len % 32) { PyErr_SetString(PyExc_ValueError, "leaves are 32-byte hashes"); return NULL; }
    if (depth > 64) { PyErr_SetString(PyExc_ValueError, "stack is deeper than a 64-bit tree"); return NULL; }
    unsigned char (*frontier)[32] = PyMem_Malloc(65 * 32);
    if (!frontier) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < depth; i++) {
        PyObject *item = PyList_GET_ITEM(stack, i);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) != 32) { PyMem_Free(frontier); PyErr_SetString(PyExc_ValueError, "stack holds 32-byte hashes"); return NULL; }
        memcpy(frontier[i], PyBytes_AS_STRING(item), 32);
    }
    Py_BEGIN_ALLOW_THREADS
    grow(frontier, &depth, size, buf->buf, n, cuts, k, roots);
    Py_END_ALLOW_THREADS
    PyObject *fresh = PyList_New(depth);
    for (Py_ssize_t i = 0; fresh && i < depth; i++) {
        PyObject *item = PyBytes_FromStringAndSize((const char *)frontier[i], 32);
        if (!item) { Py_CLEAR(fresh); break; }
        PyList_SET_ITEM(fresh, i, item);
    }
    PyMem_Free(frontier);
    if (!fresh) return NULL;
    if (PyList_SetSlice(stack, 0, PyList_GET_SIZE(stack), fresh) < 0) { Py_DECREF(fresh); return NULL; }
    return fresh;
}

/* extend(stack, size, leaves) -> size: appends leaf hashes to a compact range (a list of
 * bytes, the right frontier of the tree), merging completed subtrees as CompactRange.append does. */
static PyObject *extend(PyObject *self, PyObject *args) {
    PyObject *stack;
    unsigned long long size;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "O!Ky*", &PyList_Type, &stack, &size, &buf)) return NULL;
    PyObject *fresh = grow_stack(stack, &size, &buf, NULL, 0, NULL);
    PyBuffer_Release(&buf);
    if (!fresh) return NULL;
    Py_DECREF(fresh);
    return PyLong_FromUnsignedLongLong(size);
}

/* extend_roots(stack, size, leaves, cuts) -> (size, roots): as extend(), and returns the root of
 * the tree at each size of `cuts` (ascending, from size to size + len(leaves) // 32 inclusive),
 * 32 bytes each. */
static PyObject *extend_roots(PyObject *self, PyObject *args) {
    PyObject *stack, *cut_list, *fresh = NULL, *out = NULL;
    unsigned long long size;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "O!Ky*O", &PyList_Type, &stack, &size, &buf, &cut_list)) return NULL;
    PyObject *cut_seq = PySequence_Fast(cut_list, "cuts must be a sequence of sizes");
    if (!cut_seq) { PyBuffer_Release(&buf); return NULL; }
    Py_ssize_t k = PySequence_Fast_GET_SIZE(cut_seq);
    unsigned long long *cuts = PyMem_Malloc((k + 1) * sizeof *cuts);
    PyObject *roots = PyBytes_FromStringAndSize(NULL, 32 * k);
    if (!cuts || !roots) { PyErr_NoMemory(); goto done; }
    unsigned long long last = size, top = size + (unsigned long long)(buf.len / 32);
    for (Py_ssize_t i = 0; i < k; i++) {
        cuts[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(cut_seq, i));
        if (PyErr_Occurred()) goto done;
        if (cuts[i] < last || cuts[i] > top) { PyErr_SetString(PyExc_ValueError, "cuts must ascend within the sizes the leaves reach"); goto done; }
        last = cuts[i];
    }
    fresh = grow_stack(stack, &size, &buf, cuts, k, (unsigned char *)PyBytes_AS_STRING(roots));
    if (fresh) out = Py_BuildValue("(KO)", size, roots);
done:
    Py_XDECREF(fresh);
    Py_XDECREF(roots);
    PyMem_Free(cuts);
    Py_DECREF(cut_seq);
    PyBuffer_Release(&buf);
    return out;
}

/* verify_ed25519(public, messages, signatures) -> bytes: one byte per message, 1 where the
 * signature is this Ed25519 key's valid signature of it (OpenSSL's verification, as the
 * `cryptography` package does), checked with the GIL released. */
static PyObject *verify_ed25519(PyObject *self, PyObject *args) {
    Py_buffer pub;
    PyObject *msg_arg, *sig_arg, *msgs = NULL, *sigs = NULL, *out = NULL;
    if (!PyArg_ParseTuple(args, "y*OO", &pub, &msg_arg, &sig_arg)) return NULL;
    EVP_PKEY *key = NULL;
    EVP_MD_CTX *ctx = NULL;
    if (pub.len != 32) { PyErr_SetString(PyExc_ValueError, "an Ed25519 public key is 32 bytes"); goto done; }
    if (!(msgs = PySequence_Tuple(msg_arg)) || !(sigs = PySequence_Tuple(sig_arg))) goto done;
    Py_ssize_t n = PyTuple_GET_SIZE(msgs);
    if (PyTuple_GET_SIZE(sigs) != n) { PyErr_SetString(PyExc_ValueError, "one signature per message"); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(msgs, i)) || !PyBytes_Check(PyTuple_GET_ITEM(sigs, i))) {
            PyErr_SetString(PyExc_TypeError, "messages and signatures are bytes"); goto done;
        }
    }
    key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub.buf, 32);
    ctx = EVP_MD_CTX_new();
    if (!key || !ctx) { PyErr_SetString(PyExc_ValueError, "OpenSSL refused the Ed25519 public key"); goto done; }
    if (!(out = PyBytes_FromStringAndSize(NULL, n))) goto done;
    unsigned char *ok = (unsigned char *)PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *m = PyTuple_GET_ITEM(msgs, i), *s = PyTuple_GET_ITEM(sigs, i);
        ok[i] = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1
                && EVP_DigestVerify(ctx, (const unsigned char *)PyBytes_AS_STRING(s), (size_t)PyBytes_GET_SIZE(s),
                                    (const unsigned char *)PyBytes_AS_STRING(m), (size_t)PyBytes_GET_SIZE(m)) == 1;
        EVP_MD_CTX_reset(ctx);
    }
    ERR_clear_error();
    Py_END_ALLOW_THREADS
done:
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    Py_XDECREF(msgs);
    Py_XDECREF(sigs);
    PyBuffer_Release(&pub);
    return out;
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
    {"crc32", py_crc32, METH_VARARGS, "CRC-32 as zlib.crc32, by the code the scanner uses."},
    {"extend_roots", extend_roots, METH_VARARGS, "Appends leaf hashes to a compact range, returning the root at given sizes."},
    {"verify_ed25519", verify_ed25519, METH_VARARGS, "Checks Ed25519 signatures of one key, with the GIL released."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", "Frame scanning and Merkle hashing in C.", -1, methods};

PyMODINIT_FUNC PyInit__fastscan(void) {
    crc32_init();
    return PyModule_Create(&module);
}
