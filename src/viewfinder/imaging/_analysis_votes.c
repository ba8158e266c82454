/*
 * The move search's cheapest candidates: votes() hashes the lines (rows or columns) of a
 * region in the candidate and of its surroundings in the base, and counts the offsets at which
 * equal lines lie: content that slid along one axis votes for how far it went.
 */
#include "_analysis.h"

#include <stdlib.h>
#include <string.h>

/* A line's hash is a polynomial over its pixels' (r, g, b), mixed at the end; equal lines have
 * equal hashes and a collision only costs a candidate that the exact check then rejects. */
#define SIG_MUL 0x9E3779B97F4A7C15ull
#define BYTE_MUL 0x9E3779B1u

static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static inline uint64_t rgb(const uint8_t *p) {
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16);
}

/* Asks for the n bytes two rows below row, when there is such a row: an area's row is a few
 * cache lines a page from the last, which the hardware does not fetch ahead. */
static inline void ahead(const uint8_t *row, Py_ssize_t stride, size_t n, int there) {
    if (there)
        for (size_t i = 0; i < n; i += 64) __builtin_prefetch(row + 2 * stride + i);
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
        ahead(row, stride, n, y + 2 < y1);
        for (size_t j = 0; j < n; j++) {
            hash[j] = hash[j] * BYTE_MUL + row[j] + 1;
            same[j] &= row[j] == top[j];
        }
    }
}

/* Hash every row (or column) of the area [x0, x1) x [y0, y1) into hash[], and tell in flat[]
 * which lines are one colour: 0, or -1 when out of memory. */
static int line_hashes(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t x1,
                        Py_ssize_t y1, int columns, uint64_t *hash, uint8_t *flat) {
    const int c = src->channels;
    if (!columns && c == 3) {
        /* A row of (r, g, b) triples is hashed as the run of bytes it is, eight at a time in four
         * interleaved polynomials (one chain of multiplies would wait on itself); it is one
         * colour when every byte equals the one three before it. */
        const size_t n = (size_t)(x1 - x0) * 3, words = n / 8;
        for (Py_ssize_t y = y0; y < y1; y++) {
            const uint8_t *row = src->data + y * src->stride + x0 * 3;
            ahead(row, src->stride, n, y + 2 < y1);
            uint64_t h[4] = {0, 0, 0, 0}, word;
            size_t k = 0;
            for (; k + 4 <= words; k += 4) {
                for (int lane = 0; lane < 4; lane++) {
                    memcpy(&word, row + (k + lane) * 8, 8);
                    h[lane] = h[lane] * SIG_MUL + word + 1;
                }
            }
            for (; k < words; k++) {
                memcpy(&word, row + k * 8, 8);
                h[0] = h[0] * SIG_MUL + word + 1;
            }
            word = 0;
            memcpy(&word, row + words * 8, n - words * 8);
            h[1] = h[1] * SIG_MUL + word + 1;
            hash[y - y0] = mix64(((h[0] * SIG_MUL + h[1]) * SIG_MUL + h[2]) * SIG_MUL + h[3]);
            flat[y - y0] = (uint8_t)(memcmp(row, row + 3, n - 3) == 0);
        }
        return 0;
    }
    if (!columns) {
        /* Four interleaved polynomials a row, over the pixels' (r, g, b) (alpha left out). */
        const Py_ssize_t n = x1 - x0;
        for (Py_ssize_t y = y0; y < y1; y++) {
            const uint8_t *row = src->data + y * src->stride + x0 * c;
            ahead(row, src->stride, (size_t)(n * c), y + 2 < y1);
            const uint64_t first = rgb(row);
            uint64_t h[4] = {0, 0, 0, 0};
            int same = 1;
            Py_ssize_t x = 0;
            for (; x + 4 <= n; x += 4) {
                for (int k = 0; k < 4; k++) {
                    const uint64_t v = rgb(row + (x + k) * c);
                    h[k] = h[k] * SIG_MUL + v + 1;
                    same &= v == first;
                }
            }
            for (; x < n; x++) {
                const uint64_t v = rgb(row + x * c);
                h[0] = h[0] * SIG_MUL + v + 1;
                same &= v == first;
            }
            hash[y - y0] = mix64(((h[0] * SIG_MUL + h[1]) * SIG_MUL + h[2]) * SIG_MUL + h[3]);
            flat[y - y0] = (uint8_t)same;
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
