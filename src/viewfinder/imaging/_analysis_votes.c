/*
 * The move search's cheapest candidates: votes() hashes the lines (rows or columns) of a
 * region in the candidate and of its surroundings in the base, and counts the offsets at which
 * equal lines lie: content that slid along one axis votes for how far it went.
 */
#include "_analysis.h"

#include <stdlib.h>
#include <string.h>

/* A line's key mixes polynomial hashes of its (r, g, b) bytes, 32 bits each; equal lines have
 * equal keys and a collision only costs a candidate that the exact check then rejects. */
#define SIG_MUL 0x9E3779B97F4A7C15ull
#define BYTE_MUL 0x9E3779B1u

static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* The n bytes from `data` of rows [y0, y1) (stride apart): each byte position's polynomial
 * hash down the rows, and whether it holds one value. */
VF_CLONES
static void column_bytes(const uint8_t *data, Py_ssize_t stride, Py_ssize_t y0, Py_ssize_t y1,
                         size_t n, uint32_t *restrict hash, uint8_t *restrict same) {
    const uint8_t *top = data + y0 * stride;
    for (size_t j = 0; j < n; j++) {
        hash[j] = 0;
        same[j] = 1;
    }
    for (Py_ssize_t y = y0; y < y1; y++) {
        const uint8_t *restrict row = data + y * stride;
        fetch_ahead(row, stride, n, y + 2 < y1);
        for (size_t j = 0; j < n; j++) {
            hash[j] = hash[j] * BYTE_MUL + row[j] + 1;
            same[j] &= row[j] == top[j];
        }
    }
}

/* The key of a row of n bytes taken as 4-byte words under the mask `keep`, 32 bytes at a time
 * in eight 32-bit polynomials (a loop that vectorises, where one 64-bit chain would wait on
 * its own multiplies), into *key; returns the bits in which some word differs from `first`. */
VF_CLONES
static uint32_t row_key(const uint8_t *restrict row, size_t n, uint32_t keep, uint32_t first,
                        uint64_t *key) {
    uint32_t h[8] = {0, 0, 0, 0, 0, 0, 0, 0}, unlike[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 8; k++) {
            uint32_t word;
            memcpy(&word, row + i + 4 * k, 4);
            word &= keep;
            h[k] = h[k] * BYTE_MUL + word + 1;
            unlike[k] |= word ^ first;
        }
    uint8_t tail[32] = {0};
    memcpy(tail, row + i, n - i);
    const size_t words = (n - i + 3) / 4;
    uint64_t mixed = 0;
    uint32_t differs = 0;
    for (int k = 0; k < 8; k++) {
        uint32_t word;
        memcpy(&word, tail + 4 * k, 4);
        word &= keep;
        h[k] = h[k] * BYTE_MUL + word + 1;
        if ((size_t)k < words) unlike[k] |= word ^ first;
        mixed = mixed * SIG_MUL + h[k];
        differs |= unlike[k];
    }
    *key = mix64(mixed);
    return differs;
}

/* Hash every row (or column) of the area [x0, x1) x [y0, y1) into hash[], and tell in flat[]
 * which lines are one colour: 0, or -1 when out of memory. */
static int line_hashes(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t x1,
                        Py_ssize_t y1, int columns, uint64_t *hash, uint8_t *flat) {
    const int c = src->channels;
    if (!columns) {
        /* (r, g, b, a) pixels are read with their alpha masked out. */
        const uint8_t rgb_bytes[4] = {0xff, 0xff, 0xff, 0};
        uint32_t keep = 0xffffffffu;
        if (c == 4) memcpy(&keep, rgb_bytes, 4);
        const size_t n = (size_t)(x1 - x0) * (size_t)c;
        for (Py_ssize_t y = y0; y < y1; y++) {
            const uint8_t *row = src->data + y * src->stride + x0 * c;
            fetch_ahead(row, src->stride, n, y + 2 < y1);
            uint32_t first = 0;
            if (c == 4) memcpy(&first, row, 4);
            const uint32_t unlike = row_key(row, n, keep, first & keep, &hash[y - y0]);
            /* One colour: every byte equal to the one a pixel before it, or every pixel's
             * (r, g, b) equal to the first's. */
            flat[y - y0] = (uint8_t)(c == 3 ? memcmp(row, row + 3, n - 3) == 0 : unlike == 0);
        }
        return 0;
    }
    /* Row by row, every column's hash advanced at once: memory is read in order. Each byte of
     * a row has a hash of its own, 32 bits a byte, which vectorises (a 64-bit multiply does not
     * with AVX2); a column's key mixes its (r, g, b) bytes' hashes. */
    const size_t n = (size_t)(x1 - x0) * (size_t)c;
    uint32_t *bytes = malloc(sizeof(uint32_t) * n);
    uint8_t *same = malloc(n);
    if (!bytes || !same) {
        free(bytes);
        free(same);
        return -1;
    }
    column_bytes(src->data + x0 * c, src->stride, y0, y1, n, bytes, same);
    for (Py_ssize_t i = 0; i < x1 - x0; i++) {
        const uint32_t *k = bytes + i * c;
        hash[i] = mix64(((k[0] * SIG_MUL + k[1]) * SIG_MUL + k[2]) * SIG_MUL + 1);
        flat[i] = same[i * c] & same[i * c + 1] & same[i * c + 2];
    }
    free(bytes);
    free(same);
    return 0;
}

typedef struct {
    uint64_t key;
    Py_ssize_t at;
} line_t;

static int by_key_then_place(const void *p, const void *q) {
    const line_t *a = p, *b = q;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

typedef struct {
    Py_ssize_t offset[3];
    int found;
} best3_t;

/* The offsets voted for, most votes first and, among equals, the first seen first: candidate
 * lines are taken in order and, for each, the base lines with its hash in order. Returns 0, or
 * -1 when memory ran out. */
static int count_votes(const pixels_t *a, const pixels_t *b, Py_ssize_t width, Py_ssize_t height,
                       Py_ssize_t x, Py_ssize_t y, Py_ssize_t w, Py_ssize_t h, Py_ssize_t least,
                       int columns, best3_t *best) {
    Py_ssize_t search = w > h ? w : h;
    if (least > search) search = least;
    const Py_ssize_t lo = columns ? x : y, hi = columns ? x + w : y + h;
    const Py_ssize_t limit = columns ? width : height;
    const Py_ssize_t first = lo - search > 0 ? lo - search : 0;
    const Py_ssize_t last = hi + search < limit ? hi + search : limit;
    const Py_ssize_t n_base = last - first, n_cand = hi - lo;
    /* Offsets lie in [lo - (last - 1), (hi - 1) - first]. */
    const Py_ssize_t min_offset = lo - (last - 1), span = (hi - 1 - first) - min_offset + 1;
    uint64_t *base_keys = malloc(sizeof(uint64_t) * (size_t)(n_base + n_cand));
    uint8_t *flats = malloc((size_t)(n_base + n_cand));
    line_t *lines = malloc(sizeof(line_t) * (size_t)n_base);
    Py_ssize_t *votes = calloc((size_t)span, sizeof(Py_ssize_t));
    Py_ssize_t *seen = malloc(sizeof(Py_ssize_t) * (size_t)span);
    int ok = base_keys && flats && lines && votes && seen;
    best->found = 0;
    uint64_t *cand_keys = ok ? base_keys + n_base : NULL;
    uint8_t *base_flat = flats, *cand_flat = ok ? flats + n_base : NULL;
    if (ok) {
        if (columns)
            ok = line_hashes(a, first, y, last, y + h, 1, base_keys, base_flat) == 0 &&
                 line_hashes(b, lo, y, hi, y + h, 1, cand_keys, cand_flat) == 0;
        else
            ok = line_hashes(a, x, first, x + w, last, 0, base_keys, base_flat) == 0 &&
                 line_hashes(b, x, lo, x + w, hi, 0, cand_keys, cand_flat) == 0;
    }
    if (ok) {
        Py_ssize_t n = 0;
        for (Py_ssize_t i = 0; i < n_base; i++)
            if (!base_flat[i]) lines[n++] = (line_t){base_keys[i], first + i};
        qsort(lines, (size_t)n, sizeof(line_t), by_key_then_place);
        Py_ssize_t order = 0;
        for (Py_ssize_t i = 0; i < n_cand; i++) {
            if (cand_flat[i]) continue;
            const uint64_t key = cand_keys[i];
            Py_ssize_t l = 0, r = n; /* the first base line with this key */
            while (l < r) {
                const Py_ssize_t m = l + (r - l) / 2;
                if (lines[m].key < key) l = m + 1;
                else r = m;
            }
            for (Py_ssize_t j = l; j < n && lines[j].key == key; j++) {
                const Py_ssize_t offset = lo + i - lines[j].at;
                if (offset == 0) continue;
                const Py_ssize_t slot = offset - min_offset;
                if (votes[slot]++ == 0) seen[slot] = order;
                order++;
            }
        }
        for (int k = 0; k < 3; k++) {
            Py_ssize_t pick = -1;
            for (Py_ssize_t s = 0; s < span; s++) {
                if (votes[s] <= 0) continue;
                if (pick < 0 || votes[s] > votes[pick] ||
                    (votes[s] == votes[pick] && seen[s] < seen[pick]))
                    pick = s;
            }
            if (pick < 0) break;
            best->offset[best->found++] = pick + min_offset;
            votes[pick] = -1; /* taken */
        }
    }
    free(base_keys);
    free(flats);
    free(lines);
    free(votes);
    free(seen);
    return ok ? 0 : -1;
}

PyObject *vfa_votes(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj;
    Py_ssize_t x, y, w, h, least;
    int columns;
    if (!PyArg_ParseTuple(args, "OO(nnnn)np", &a_obj, &b_obj, &x, &y, &w, &h, &least, &columns))
        return NULL;
    Py_buffer va, vb;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    PyObject *result = NULL;
    if (vfa_check_area(&va, x, y, w, h) < 0) goto done;
    best3_t best;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = count_votes(&a, &b, va.shape[1], va.shape[0], x, y, w, h, least, columns, &best);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyList_New(best.found);
    for (int k = 0; result && k < best.found; k++) {
        PyObject *offset = PyLong_FromSsize_t(best.offset[k]);
        if (!offset) Py_CLEAR(result);
        else PyList_SET_ITEM(result, k, offset);
    }
done:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

VFA_DOC(vfa_votes_doc,
        "votes(a, b, box, least, columns) -> list of up to 3 offsets\n\n"
        "The offsets d along y (along x with columns) at which b's rows (columns) across box\n"
        "(x, y, w, h) equal a's rows (columns) d before them, most votes first, ties to the\n"
        "first seen. a's lines up to max(w, h, least) away from the box are searched; lines of\n"
        "one colour and offset 0 do not vote.");
