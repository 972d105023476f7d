/* Optional accelerator for full verification: frame checks, CRC-32 and RFC 6962 hashing in C, and
 * batches of Ed25519 checks; everything that takes time runs with the GIL released.
 *
 * ledger/segments.py defines the frame format and ledger/fastscan.py the Python reference that
 * this module must agree with (tests/test_fastscan.py checks both on the same bytes). */
#define PY_SSIZE_T_CLEAN
#define OPENSSL_SUPPRESS_DEPRECATED
#include <Python.h>
#include <dlfcn.h>
#include <pthread.h>
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
#define X86 1
#include <cpuid.h>
#include <immintrin.h>
#define FOLD_MIN 64

static int cpu_has(int leaf, int reg, int bit) { /* reg: 1 = EBX, 2 = ECX */
    unsigned int r[4] = {0, 0, 0, 0};
    if (!__get_cpuid_count((unsigned int)leaf, 0, &r[0], &r[1], &r[2], &r[3])) return 0;
    return (int)((r[reg] >> bit) & 1);
}

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

static int fold_ok = 0; /* set once at import, before any thread runs crc32_any */
static uint32_t crc_table[4][256]; /* slicing by four */

static void crc32_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++)
        for (int t = 1; t < 4; t++) crc_table[t][n] = crc_table[0][crc_table[t - 1][n] & 0xFF] ^ (crc_table[t - 1][n] >> 8);
    fold_ok = cpu_has(1, 2, 1) && cpu_has(1, 2, 19); /* PCLMULQDQ, SSE4.1 */
}

static uint32_t crc32_bytes(uint32_t crc, const unsigned char *buf, size_t len) { /* a few bytes: cheaper than a call into zlib */
    crc = ~crc;
    for (; len >= 4; len -= 4, buf += 4) {
        crc ^= le32(buf);
        crc = crc_table[3][crc & 0xFF] ^ crc_table[2][(crc >> 8) & 0xFF] ^ crc_table[1][(crc >> 16) & 0xFF] ^ crc_table[0][crc >> 24];
    }
    while (len--) crc = crc_table[0][(crc ^ *buf++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

static uint32_t crc32_any(uint32_t crc, const unsigned char *buf, size_t len) {
    if (fold_ok && len >= FOLD_MIN) {
        size_t bulk = len & ~(size_t)15;
        return crc32_bytes(~crc32_fold(buf, bulk, ~crc), buf + bulk, len - bulk);
    }
    return (uint32_t)crc32(crc, buf, (uInt)len);
}
#else
static void crc32_init(void) {}
static uint32_t crc32_bytes(uint32_t crc, const unsigned char *buf, size_t len) { return (uint32_t)crc32(crc, buf, (uInt)len); }
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
    uint32_t c = crc32_bytes(0, data + off, 4);
    c = crc32_any(c, data + off + 8, 8 + (size_t)length);
    if (c != crc) return "CRC mismatch: the frame's bytes were changed";
    if (le32(data + *stop) != *word) return "trailing length differs from the header";
    if (index != expected) { snprintf(message, size, "frame says it holds entry %llu, expected entry %llu here", (unsigned long long)index, expected); return message; }
    return NULL;
}

/* SHA-256 of leaves and nodes, one block at a time by OpenSSL on blocks built here. The blocks of
 * one message make a chain of dependent compressions; two independent messages are hashed
 * together, their blocks alternating, so that the CPU overlaps the two chains: leaves two frames
 * at a time, the tree in aligned chunks two nodes at a time (see hash_chunk). That is about a
 * third faster than one message after the other (interleaving the two by hand with the SHA
 * extensions gains nothing more). tests/test_fastscan.py checks every padding case against hashlib. */
static const uint32_t SHA_IV[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

static void sha_compress(uint32_t *state, const unsigned char *block) {
    SHA256_CTX ctx;
    memcpy(ctx.h, state, 32);
    SHA256_Transform(&ctx, block);
    memcpy(state, ctx.h, 32);
}

static void sha_digest(const uint32_t *state, unsigned char *out) {
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(state[i] >> 24); out[4 * i + 1] = (unsigned char)(state[i] >> 16);
        out[4 * i + 2] = (unsigned char)(state[i] >> 8); out[4 * i + 3] = (unsigned char)state[i];
    }
}

/* Block i of the padded message 0x00 ‖ payload (a leaf): a pointer into the payload where the
 * block lies wholly inside it, else built in `tmp`. */
static const unsigned char *leaf_block(const unsigned char *payload, size_t len, size_t i, unsigned char *tmp) {
    size_t lo = 64 * i, hi = lo + 64, m = len + 1; /* message bytes [lo, hi); message byte j is payload[j - 1] */
    if (lo > 0 && hi <= m) return payload + lo - 1;
    memset(tmp, 0, 64);
    size_t a = lo > 0 ? lo : 1, b = hi < m ? hi : m;
    if (b > a) memcpy(tmp + (a - lo), payload + a - 1, b - a);
    if (m >= lo && m < hi) tmp[m - lo] = 0x80;
    if (hi == 64 * ((m + 72) / 64)) { /* the last block ends with the length in bits */
        uint64_t bits = (uint64_t)m * 8;
        for (int k = 0; k < 8; k++) tmp[63 - k] = (unsigned char)(bits >> (8 * k));
    }
    return tmp;
}

static size_t leaf_blocks(size_t len) { return (len + 1 + 72) / 64; }

/* The leaf hash SHA-256(0x00 ‖ payload) of one payload, or of two together. */
static void leaf_hash(const unsigned char *p, size_t len, unsigned char *out) {
    uint32_t s[8];
    unsigned char tmp[64];
    memcpy(s, SHA_IV, 32);
    for (size_t i = 0, n = leaf_blocks(len); i < n; i++) sha_compress(s, leaf_block(p, len, i, tmp));
    sha_digest(s, out);
}

static void leaf_hash2(const unsigned char *p, size_t len, unsigned char *out, const unsigned char *q, size_t len2, unsigned char *out2) {
    uint32_t s[8], t[8];
    unsigned char tmp[64], tmp2[64];
    size_t n = leaf_blocks(len), n2 = leaf_blocks(len2), i = 0;
    memcpy(s, SHA_IV, 32);
    memcpy(t, SHA_IV, 32);
    for (; i < n && i < n2; i++) {
        const unsigned char *block = leaf_block(p, len, i, tmp), *block2 = leaf_block(q, len2, i, tmp2);
        sha_compress(s, block);
        sha_compress(t, block2);
    }
    for (size_t j = i; j < n; j++) sha_compress(s, leaf_block(p, len, j, tmp));
    for (size_t j = i; j < n2; j++) sha_compress(t, leaf_block(q, len2, j, tmp2));
    sha_digest(s, out);
    sha_digest(t, out2);
}

/* RFC 6962 node hash SHA-256(0x01 ‖ left ‖ right): the 65 bytes and their padding are exactly
 * two blocks, built here and compressed directly (SHA256() in OpenSSL 3 looks its algorithm up on
 * every call, which costs more than the hashing). `out` may be `left` or `right`. */
static void node_blocks(const unsigned char *left, const unsigned char *right, unsigned char *block) {
    block[0] = 1;
    memcpy(block + 1, left, 32);
    memcpy(block + 33, right, 32);
    memset(block + 65, 0, 63);
    block[65] = 0x80;
    block[126] = 0x02; block[127] = 0x08; /* 65 bytes = 520 bits, big-endian */
}

static void node_hash(const unsigned char *left, const unsigned char *right, unsigned char *out) {
    unsigned char block[128];
    uint32_t s[8];
    node_blocks(left, right, block);
    memcpy(s, SHA_IV, 32);
    sha_compress(s, block);
    sha_compress(s, block + 64);
    sha_digest(s, out);
}

static void node_hash2(const unsigned char *left, const unsigned char *right, unsigned char *out,
                       const unsigned char *left2, const unsigned char *right2, unsigned char *out2) {
    unsigned char block[128], block2[128];
    uint32_t s[8], t[8];
    node_blocks(left, right, block);
    node_blocks(left2, right2, block2);
    memcpy(s, SHA_IV, 32);
    memcpy(t, SHA_IV, 32);
    sha_compress(s, block);
    sha_compress(t, block2);
    sha_compress(s, block + 64);
    sha_compress(t, block2 + 64);
    sha_digest(s, out);
    sha_digest(t, out2);
}

/* sha256_leaves(payloads) -> bytes: the leaf hashes of the given payloads, by the scanner's code:
 * the writer hashes each appended batch in one call (bench/append.py's goal). */
static PyObject *sha256_leaves(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Tuple(arg);
    if (!seq) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    PyObject *out = PyBytes_FromStringAndSize(NULL, 32 * n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(seq, i))) { PyErr_SetString(PyExc_TypeError, "payloads are bytes"); Py_CLEAR(out); }
    }
    if (out) {
        unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
        Py_ssize_t i = 0;
        for (; i + 1 < n; i += 2) {
            PyObject *a = PyTuple_GET_ITEM(seq, i), *b = PyTuple_GET_ITEM(seq, i + 1);
            leaf_hash2((const unsigned char *)PyBytes_AS_STRING(a), (size_t)PyBytes_GET_SIZE(a), o + 32 * i,
                       (const unsigned char *)PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b), o + 32 * (i + 1));
        }
        if (i < n) leaf_hash((const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(seq, i)),
                             (size_t)PyBytes_GET_SIZE(PyTuple_GET_ITEM(seq, i)), o + 32 * i);
    }
    Py_DECREF(seq);
    return out;
}

/* Why: bench/verify.py's goal (verification at a third of raw SHA-256 or better) needs the frame
 * checks, CRC-32 and leaf hashes of every entry in one pass without the GIL.
 * scan(data, first_index) -> (leaves, count, last_commit, commit_end, error_offset, error)
 * leaves: count*32 bytes of leaf hashes; error_offset -1 when every frame is well formed.
 * scan_part(data, first_index, final) -> the same and `consumed`: with final false, `data` is a
 * piece of a segment that goes on, and a frame it holds only the start of ends the scan without
 * an error; `consumed` is where that frame starts (or where the scan stopped). */
static PyObject *do_scan(PyObject *args, int part) {
    Py_buffer buf;
    unsigned long long first;
    int final = 1;
    if (part ? !PyArg_ParseTuple(args, "y*Kp", &buf, &first, &final) : !PyArg_ParseTuple(args, "y*K", &buf, &first)) return NULL;
    const unsigned char *data = buf.buf;
    Py_ssize_t end = buf.len, off = 0, count = 0, last_commit = 0, commit_end = 0;
    /* room for as many frames as could fit; the pages past those found are never touched, and
     * the object shrinks in place at the end */
    PyObject *blob = PyBytes_FromStringAndSize(NULL, 32 * (end / OVERHEAD + 1));
    if (!blob) { PyBuffer_Release(&buf); return NULL; }
    unsigned char *leaves = (unsigned char *)PyBytes_AS_STRING(blob);
    const char *error = NULL;
    char message[160];
    int held = 0;
    Py_ssize_t held_off = 0, held_len = 0;
    Py_BEGIN_ALLOW_THREADS
    while (off < end) {
        Py_ssize_t stop;
        uint32_t word;
        if (!final && (end - off < OVERHEAD || off + OVERHEAD + (Py_ssize_t)(le32(data + off) & LENGTH_MASK) > end)) break;
        error = check_frame(data, off, end, first + (unsigned long long)count, &stop, &word, message, sizeof message);
        if (error) break;
        Py_ssize_t length = stop - off - HEADER;
        if (held) { /* hash the frame held back together with this one */
            leaf_hash2(data + held_off + HEADER, (size_t)held_len, leaves + 32 * (count - 1),
                       data + off + HEADER, (size_t)length, leaves + 32 * count);
            held = 0;
        } else {
            held = 1; held_off = off; held_len = length;
        }
        count++;
        off = stop + 4;
        if (word & COMMIT) { last_commit = count; commit_end = off; }
    }
    if (held) leaf_hash(data + held_off + HEADER, (size_t)held_len, leaves + 32 * (count - 1));
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (_PyBytes_Resize(&blob, 32 * count) < 0) return NULL;
    PyObject *why = error ? PyUnicode_FromString(error) : Py_NewRef(Py_None);
    if (!why) { Py_DECREF(blob); return NULL; }
    if (part) return Py_BuildValue("(NnnnnNn)", blob, count, last_commit, commit_end, error ? off : (Py_ssize_t)-1, why, off);
    return Py_BuildValue("(NnnnnN)", blob, count, last_commit, commit_end, error ? off : (Py_ssize_t)-1, why);
}

static PyObject *scan(PyObject *self, PyObject *args) { return do_scan(args, 0); }

static PyObject *scan_part(PyObject *self, PyObject *args) { return do_scan(args, 1); }

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

#define CHUNK_LEVELS 8
#define CHUNK ((Py_ssize_t)1 << CHUNK_LEVELS)

/* Hashes the perfect subtree over CHUNK leaves level by level, two nodes at a time: level L
 * (1 ≤ L ≤ CHUNK_LEVELS) holds CHUNK >> L nodes from `level[L]`; level 0 is the leaves. (Leaf by
 * leaf, each node waits for the one before it.) */
static void hash_chunk(const unsigned char (*leaves)[32], unsigned char (*scratch)[32], const unsigned char (*level[])[32]) {
    level[0] = leaves;
    for (int L = 1; L <= CHUNK_LEVELS; L++) {
        Py_ssize_t count = CHUNK >> L;
        const unsigned char (*below)[32] = level[L - 1];
        unsigned char (*here)[32] = scratch;
        scratch += count;
        Py_ssize_t j = 0;
        for (; j + 1 < count; j += 2)
            node_hash2(below[2 * j], below[2 * j + 1], here[j], below[2 * j + 2], below[2 * j + 3], here[j + 1]);
        if (j < count) node_hash(below[2 * j], below[2 * j + 1], here[j]);
        level[L] = (const unsigned char (*)[32])here;
    }
}

/* Appends `n` leaf hashes to the frontier, writing the root to `roots` each time the tree reaches
 * one of the `k` ascending sizes in `cuts` (checked by the caller to lie in [size, size + n]).
 * Runs of CHUNK leaves that start at a multiple of CHUNK are hashed as a whole subtree (see
 * hash_chunk) and enter the frontier as one node, which is what appending them one by one gives;
 * a root inside such a run joins the frontier to the run's complete subtrees before the cut. */
static void grow(unsigned char (*frontier)[32], Py_ssize_t *depth, unsigned long long *size, const unsigned char *leaves,
                 Py_ssize_t n, const unsigned long long *cuts, Py_ssize_t k, unsigned char *roots) {
    Py_ssize_t d = *depth, c = 0, i = 0;
    unsigned long long s = *size;
    unsigned char scratch[CHUNK][32];
    const unsigned char (*level[CHUNK_LEVELS + 1])[32];
    for (;;) {
        for (; c < k && cuts[c] == s; c++) frontier_root(frontier, d, roots + 32 * c);
        if (i == n) break;
        if ((s & (CHUNK - 1)) == 0 && n - i >= CHUNK) {
            hash_chunk((const unsigned char (*)[32])(leaves + 32 * i), scratch, level);
            for (; c < k && cuts[c] < s + CHUNK; c++) { /* a root inside the chunk */
                unsigned long long r = cuts[c] - s, at = 0;
                const unsigned char *subs[CHUNK_LEVELS]; /* the run's complete subtrees before the cut, left to right */
                int t = 0;
                for (int L = CHUNK_LEVELS - 1; L >= 0; L--) {
                    if (!(r >> L & 1)) continue;
                    subs[t++] = level[L][at >> L];
                    at += 1ull << L;
                }
                unsigned char node[32]; /* then the fold of CompactRange.root over frontier and subtrees */
                memcpy(node, subs[t - 1], 32);
                for (int q = t - 2; q >= 0; q--) node_hash(subs[q], node, node);
                for (Py_ssize_t q = d - 1; q >= 0; q--) node_hash(frontier[q], node, node);
                memcpy(roots + 32 * c, node, 32);
            }
            unsigned char cur[32];
            memcpy(cur, level[CHUNK_LEVELS][0], 32);
            for (unsigned long long m = s >> CHUNK_LEVELS; m & 1; m >>= 1) node_hash(frontier[--d], cur, cur);
            memcpy(frontier[d++], cur, 32);
            s += CHUNK;
            i += CHUNK;
            continue;
        }
        unsigned char cur[32];
        memcpy(cur, leaves + i * 32, 32);
        for (unsigned long long m = s; m & 1; m >>= 1) node_hash(frontier[--d], cur, cur);
        memcpy(frontier[d++], cur, 32);
        s++;
        i++;
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
 * bytes, the right frontier of the tree), merging completed subtrees as CompactRange.append does.
 * Why: the writer grows its tree and each tile's root by a batch at a time (n − 1 node hashes). */
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
 * 32 bytes each. Why: verify compares the root at every one of 10,000 checkpoints in one pass. */
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

/* Ed25519 verification. OpenSSL's takes about 64 µs a signature here; libsodium's (the system's
 * libsodium.so.23, found at import, where there is one) about 36 µs. libsodium checks the same
 * equation and also refuses keys and R of small order and non-canonical encodings that OpenSSL
 * lets through, so what it accepts OpenSSL accepts too; whatever it refuses is asked of OpenSSL.
 * The verdicts are therefore OpenSSL's, as with the `cryptography` package, at libsodium's speed
 * for the valid signatures that make up a sound ledger. */
typedef int (*sodium_verify_t)(const unsigned char *sig, const unsigned char *m, unsigned long long mlen, const unsigned char *pk);
static sodium_verify_t sodium_verify = NULL;

static void sodium_load(void) {
    void *lib = dlopen("libsodium.so.23", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    int (*init)(void) = (int (*)(void))dlsym(lib, "sodium_init");
    sodium_verify_t verify = (sodium_verify_t)dlsym(lib, "crypto_sign_ed25519_verify_detached");
    if (!init || !verify || init() < 0) { dlclose(lib); return; }
    sodium_verify = verify;
}

/* One signature to check: the key, the message and the signature, borrowed from Python objects
 * that the caller keeps alive while the GIL is released. */
typedef struct {
    const unsigned char *pub, *msg, *sig;
    size_t mlen, slen;
} check_t;

typedef struct {
    const check_t *checks;
    unsigned char *ok;
    Py_ssize_t from, to;
} check_range_t;

/* Checks a range of signatures (OpenSSL's verdicts: libsodium first, OpenSSL on refusal); runs
 * without the GIL, on the calling thread or a helper thread. */
static void *check_range(void *arg) {
    check_range_t *r = (check_range_t *)arg;
    EVP_MD_CTX *ctx = NULL;
    for (Py_ssize_t i = r->from; i < r->to; i++) {
        const check_t *c = &r->checks[i];
        r->ok[i] = sodium_verify && c->slen == 64 && sodium_verify(c->sig, c->msg, c->mlen, c->pub) == 0;
        if (r->ok[i]) continue;
        EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, c->pub, 32);
        if (!ctx) ctx = EVP_MD_CTX_new();
        r->ok[i] = key && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
                   EVP_DigestVerify(ctx, c->sig, c->slen, c->msg, c->mlen) == 1;
        if (ctx) EVP_MD_CTX_reset(ctx);
        EVP_PKEY_free(key);
    }
    EVP_MD_CTX_free(ctx);
    ERR_clear_error(); /* the error queue is the thread's own */
    return NULL;
}

#define MAX_CHECK_THREADS 8

/* Runs the checks split over `threads` threads (the caller's and threads - 1 started for the
 * call), with the GIL released; where a thread cannot be started its share runs on the caller's. */
static void run_checks(const check_t *checks, unsigned char *ok, Py_ssize_t n, int threads) {
    if (threads < 1) threads = 1;
    if (threads > MAX_CHECK_THREADS) threads = MAX_CHECK_THREADS;
    if (threads > n) threads = n > 0 ? (int)n : 1;
    check_range_t ranges[MAX_CHECK_THREADS];
    pthread_t started[MAX_CHECK_THREADS];
    int running[MAX_CHECK_THREADS] = {0};
    Py_BEGIN_ALLOW_THREADS
    for (int t = 0; t < threads; t++) {
        ranges[t] = (check_range_t){checks, ok, n * t / threads, n * (t + 1) / threads};
        if (t > 0) running[t] = pthread_create(&started[t], NULL, check_range, &ranges[t]) == 0;
    }
    check_range(&ranges[0]);
    for (int t = 1; t < threads; t++) {
        if (running[t]) pthread_join(started[t], NULL);
        else check_range(&ranges[t]);
    }
    Py_END_ALLOW_THREADS
}

/* Fills one check from a key, a message and a signature (all bytes); returns -1 with an error set. */
static int fill_check(check_t *c, PyObject *pub, PyObject *msg, PyObject *sig) {
    if (!PyBytes_Check(pub) || !PyBytes_Check(msg) || !PyBytes_Check(sig)) {
        PyErr_SetString(PyExc_TypeError, "keys, messages and signatures are bytes");
        return -1;
    }
    if (PyBytes_GET_SIZE(pub) != 32) {
        PyErr_SetString(PyExc_ValueError, "an Ed25519 public key is 32 bytes");
        return -1;
    }
    *c = (check_t){(const unsigned char *)PyBytes_AS_STRING(pub), (const unsigned char *)PyBytes_AS_STRING(msg),
                   (const unsigned char *)PyBytes_AS_STRING(sig), (size_t)PyBytes_GET_SIZE(msg), (size_t)PyBytes_GET_SIZE(sig)};
    return 0;
}

/* verify_ed25519(publics, messages, signatures[, threads]) -> bytes: one byte per message, 1 where
 * the signature is a valid Ed25519 signature of it (OpenSSL's verdict, as the `cryptography`
 * package gives; see above), checked with the GIL released and split over `threads` threads.
 * `publics` is one key (bytes) for every message, or a sequence of keys, one per message. Why: verify
 * checks every note's signature beside the scan, and the service's front checks the batches of a
 * loop turn at once, each under its own source's key; `cryptography` holds the GIL. */
static PyObject *verify_ed25519(PyObject *self, PyObject *args) {
    PyObject *pub_arg, *msg_arg, *sig_arg, *pubs = NULL, *msgs = NULL, *sigs = NULL, *out = NULL;
    int threads = 1;
    check_t *checks = NULL;
    if (!PyArg_ParseTuple(args, "OOO|i", &pub_arg, &msg_arg, &sig_arg, &threads)) return NULL;
    if (!(msgs = PySequence_Tuple(msg_arg)) || !(sigs = PySequence_Tuple(sig_arg))) goto done;
    if (!PyBytes_Check(pub_arg) && !(pubs = PySequence_Tuple(pub_arg))) goto done;
    Py_ssize_t n = PyTuple_GET_SIZE(msgs);
    if (PyTuple_GET_SIZE(sigs) != n || (pubs && PyTuple_GET_SIZE(pubs) != n)) {
        PyErr_SetString(PyExc_ValueError, "one key (or one for all), one signature per message");
        goto done;
    }
    if (!(checks = PyMem_Malloc(sizeof(check_t) * (size_t)(n ? n : 1)))) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pub = pubs ? PyTuple_GET_ITEM(pubs, i) : pub_arg;
        if (fill_check(&checks[i], pub, PyTuple_GET_ITEM(msgs, i), PyTuple_GET_ITEM(sigs, i)) < 0) goto done;
    }
    if (!(out = PyBytes_FromStringAndSize(NULL, n))) goto done;
    run_checks(checks, (unsigned char *)PyBytes_AS_STRING(out), n, threads);
done:
    PyMem_Free(checks);
    Py_XDECREF(pubs);
    Py_XDECREF(msgs);
    Py_XDECREF(sigs);
    return out;
}

/* packed(data, first_index, base[, out]) -> (payloads, ends, last_commit, error_offset, error)
 * Checks frames as scan() does and returns the payloads of every well-formed frame back to back in
 * one bytes object, with their boundaries: `ends` holds count + 1 native int64 offsets counted from
 * `base`, payload k being payloads[ends[k] - base:ends[k+1] - base]. The caller keeps the entries
 * up to last_commit. One object rather than one per entry: the audit hands the buffer to Arrow and
 * to its workers as it is, and `base` lets the segments' buffers be joined end to end. Given `out`,
 * a writable buffer with room for the segment's bytes after `base`, the payloads are written there
 * at offset `base` instead, and `payloads` is None: the segments of a whole log then land in one
 * buffer without being joined afterwards. */
static PyObject *packed(PyObject *self, PyObject *args) {
    Py_buffer buf, target = {0};
    unsigned long long first;
    long long base;
    PyObject *into = Py_None;
    if (!PyArg_ParseTuple(args, "y*KL|O", &buf, &first, &base, &into)) return NULL;
    const unsigned char *data = buf.buf;
    Py_ssize_t end = buf.len, off = 0, count = 0, last_commit = 0, held = 0;
    const char *error = NULL;
    char message[160];
    PyObject *blob = NULL, *ends = NULL;
    unsigned char *out;
    if (into != Py_None) {
        if (PyObject_GetBuffer(into, &target, PyBUF_WRITABLE) < 0) goto fail;
        if (base < 0 || target.len - base < end) { PyErr_SetString(PyExc_ValueError, "no room for the segment in the output buffer"); goto fail; }
        out = (unsigned char *)target.buf + base;
    } else {
        if (!(blob = PyBytes_FromStringAndSize(NULL, end))) goto fail;
        out = (unsigned char *)PyBytes_AS_STRING(blob);
    }
    if (!(ends = PyBytes_FromStringAndSize(NULL, (end / OVERHEAD + 1) * (Py_ssize_t)sizeof(int64_t)))) goto fail;
    int64_t *bounds = (int64_t *)PyBytes_AS_STRING(ends);
    bounds[0] = base;
    while (off < end) {
        Py_ssize_t stop;
        uint32_t word;
        error = check_frame(data, off, end, first + (unsigned long long)count, &stop, &word, message, sizeof message);
        if (error) break;
        Py_ssize_t length = stop - off - HEADER;
        memcpy(out + held, data + off + HEADER, (size_t)length);
        held += length;
        bounds[++count] = base + held;
        off = stop + 4;
        if (word & COMMIT) last_commit = count;
    }
    PyBuffer_Release(&buf);
    if (target.obj) PyBuffer_Release(&target);
    if (blob && _PyBytes_Resize(&blob, held) < 0) { Py_DECREF(ends); return NULL; }
    if (_PyBytes_Resize(&ends, (count + 1) * (Py_ssize_t)sizeof(int64_t)) < 0) { Py_XDECREF(blob); return NULL; }
    PyObject *why = error ? PyUnicode_FromString(error) : Py_NewRef(Py_None);
    if (!why) { Py_XDECREF(blob); Py_DECREF(ends); return NULL; }
    return Py_BuildValue("(NNnnN)", blob ? blob : Py_NewRef(Py_None), ends, last_commit, error ? off : (Py_ssize_t)-1, why);
fail:
    PyBuffer_Release(&buf);
    if (target.obj) PyBuffer_Release(&target);
    Py_XDECREF(blob);
    Py_XDECREF(ends);
    return NULL;
}

/* gather(data, ends, indexes) -> bytes: the JSON array "[p_a,p_b,...]" of the payloads data[ends[i]:ends[i+1]]
 * for each i of `indexes` (native int64, like `ends`), built in one pass: the audit decodes a game's
 * entries, or a range of them, from it with one call. */
static PyObject *gather(PyObject *self, PyObject *args) {
    Py_buffer data, ends, indexes;
    if (!PyArg_ParseTuple(args, "y*y*y*", &data, &ends, &indexes)) return NULL;
    const int64_t *bounds = ends.buf, *which = indexes.buf;
    Py_ssize_t nbounds = ends.len / (Py_ssize_t)sizeof(int64_t), n = indexes.len / (Py_ssize_t)sizeof(int64_t), size = 2;
    PyObject *out = NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t i = which[k];
        if (i < 0 || i + 1 >= nbounds || bounds[i] > bounds[i + 1] || bounds[i + 1] > data.len) {
            PyErr_Format(PyExc_IndexError, "entry %lld is not in the buffer", (long long)i);
            goto done;
        }
        size += (Py_ssize_t)(bounds[i + 1] - bounds[i]) + (k > 0);
    }
    out = PyBytes_FromStringAndSize(NULL, size);
    if (!out) goto done;
    char *p = PyBytes_AS_STRING(out);
    *p++ = '[';
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t i = which[k];
        if (k > 0) *p++ = ',';
        memcpy(p, (const char *)data.buf + bounds[i], (size_t)(bounds[i + 1] - bounds[i]));
        p += bounds[i + 1] - bounds[i];
    }
    *p = ']';
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&indexes);
    return out;
}


/* frame_batch(first, payloads[, commit]) -> bytes: the frames of a batch, the commit mark on the
 * last one unless commit is false (a piece of a batch that goes on in the next segment).
 * The writer frames every entry it appends; in Python that was a third of a batch's cost, and
 * bench/append.py's goal (durable appends at least as fast as SQLite) needs it here. */
static PyObject *frame_batch(PyObject *self, PyObject *args) {
    unsigned long long first;
    PyObject *arg;
    int commit = 1;
    if (!PyArg_ParseTuple(args, "KO|p", &first, &arg, &commit)) return NULL;
    PyObject *seq = PySequence_Fast(arg, "payloads are a sequence of bytes");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), total = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(items[i]) || PyBytes_GET_SIZE(items[i]) > (Py_ssize_t)LENGTH_MASK) {
            PyErr_SetString(PyExc_TypeError, "payloads are bytes of at most 2**31 - 1 bytes");
            Py_DECREF(seq);
            return NULL;
        }
        total += PyBytes_GET_SIZE(items[i]) + OVERHEAD;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out) {
        unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t len = PyBytes_GET_SIZE(items[i]);
            uint32_t word = (uint32_t)len | (commit && i == n - 1 ? COMMIT : 0u);
            uint64_t index = (uint64_t)first + (uint64_t)i;
            memcpy(o, &word, 4);
            memcpy(o + 8, &index, 8);
            memcpy(o + HEADER, PyBytes_AS_STRING(items[i]), (size_t)len);
            memcpy(o + HEADER + len, &word, 4);
            uint32_t crc = crc32_any(crc32_bytes(0, o, 4), o + 8, 8 + (size_t)len);
            memcpy(o + 4, &crc, 4);
            o += len + OVERHEAD;
        }
    }
    Py_DECREF(seq);
    return out;
}

static PyMethodDef methods[] = {
    {"frame_batch", frame_batch, METH_VARARGS, "Frames a batch of payloads, the commit mark on the last."},
    {"scan", scan, METH_VARARGS, "Checks every frame of a segment's bytes and returns their leaf hashes."},
    {"scan_part", scan_part, METH_VARARGS, "As scan, over a piece of a segment that may end inside a frame."},
    {"gather", gather, METH_VARARGS, "Joins chosen payloads of a packed buffer into one JSON array."},
    {"packed", packed, METH_VARARGS, "Checks every frame of a segment's bytes and returns their payloads back to back."},
    {"extend", extend, METH_VARARGS, "Appends leaf hashes to a compact range."},
    {"crc32", py_crc32, METH_VARARGS, "CRC-32 as zlib.crc32, by the code the scanner uses."},
    {"sha256_leaves", sha256_leaves, METH_O, "Leaf hashes of payloads, by the code the scanner uses."},
    {"extend_roots", extend_roots, METH_VARARGS, "Appends leaf hashes to a compact range, returning the root at given sizes."},
    {"verify_ed25519", verify_ed25519, METH_VARARGS, "Checks Ed25519 signatures (one key, or one per message), with the GIL released."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", "Frame scanning, Merkle hashing and Ed25519 batches in C.", -1, methods};

PyMODINIT_FUNC PyInit__fastscan(void) {
    crc32_init();
    if (getenv("MATCHLEDGER_FASTSCAN_PORTABLE")) { /* tests run the code other machines get */
#ifdef X86
        fold_ok = 0;
#endif
    } else {
        sodium_load();
    }
    PyObject *mod = PyModule_Create(&module);
    if (mod && PyModule_AddStringConstant(mod, "ED25519", sodium_verify ? "libsodium, OpenSSL on refusal" : "OpenSSL") < 0) Py_CLEAR(mod);
    return mod;
}
