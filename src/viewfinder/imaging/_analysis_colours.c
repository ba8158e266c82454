/*
 * What became of a region's colours: recoloured() (each colour of the base went to one colour
 * of the candidate), one_fill() (the changed pixels went from one colour to one other),
 * edges() (the strong and faint edges of both areas) and colours() (how many colours an area
 * has). one_fill() counts its sample's colour pairs by sorting them (a radix sort: a few passes
 * over the keys, and memory for two copies of them, whatever their number of values);
 * recoloured() and colours() count pairs of colours, or colours, in a table, as an area of a
 * screenshot holds few of them.
 */
#include "_analysis.h"

#include <stdlib.h>
#include <string.h>

/* ---- sorted keys ---------------------------------------------------------------------------- */

/* Sort n keys of `bits` bits (at most 32) in place, least significant 11 bits first; scratch
 * holds n keys too. Memory stays at two arrays of the keys, whatever their number of values. */
static void sort_keys(uint32_t *keys, uint32_t *scratch, size_t n, int bits) {
    size_t counts[2048];
    uint32_t *from = keys, *to = scratch;
    for (int shift = 0; shift < bits; shift += 11) {
        memset(counts, 0, sizeof(counts));
        for (size_t i = 0; i < n; i++) counts[(from[i] >> shift) & 2047]++;
        size_t total = 0;
        for (int d = 0; d < 2048; d++) {
            const size_t c = counts[d];
            counts[d] = total;
            total += c;
        }
        for (size_t i = 0; i < n; i++) to[counts[(from[i] >> shift) & 2047]++] = from[i];
        uint32_t *swap = from;
        from = to;
        to = swap;
    }
    if (from != keys) memcpy(keys, from, n * sizeof(uint32_t));
}

/* Two arrays of n keys, or NULL (both freed) when out of memory. */
static uint32_t *keys_alloc(size_t n, uint32_t **scratch) {
    uint32_t *keys = malloc(sizeof(uint32_t) * (n ? n : 1));
    *scratch = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (!keys || !*scratch) {
        free(keys);
        free(*scratch);
        return NULL;
    }
    return keys;
}

/* 15 bits a colour, 5 a channel: steps of 8 levels, so that anti-aliasing drawn again over a
 * new colour still counts as the one colour. */
static inline uint32_t key15(const uint8_t *p) {
    return ((uint32_t)(p[0] >> 3) << 10) | ((uint32_t)(p[1] >> 3) << 5) | (uint32_t)(p[2] >> 3);
}

/* ---- recoloured ------------------------------------------------------------------------------ */

/* Counts of 30-bit keys in an open-addressed table (a key is stored plus one: 0 is empty),
 * grown to stay at most half full: an area has few (a colour, b colour) pairs, and counting
 * them in a table that stays in cache is several times faster than sorting every pixel's. */
typedef struct {
    uint32_t *keys, *counts;
    size_t mask, used;
} tally_t;

static int tally_init(tally_t *t, size_t size) {
    t->keys = calloc(size, sizeof(uint32_t));
    t->counts = malloc(sizeof(uint32_t) * size);
    t->mask = size - 1;
    t->used = 0;
    if (t->keys && t->counts) return 0;
    free(t->keys);
    free(t->counts);
    return -1;
}

static inline size_t tally_slot(const tally_t *t, uint32_t stored) {
    size_t i = (size_t)((stored * 0x9E3779B1u) >> 7) & t->mask;
    while (t->keys[i] && t->keys[i] != stored) i = (i + 1) & t->mask;
    return i;
}

static int tally_add(tally_t *t, uint32_t key, uint32_t times) {
    const uint32_t stored = key + 1;
    size_t i = tally_slot(t, stored);
    if (t->keys[i]) {
        t->counts[i] += times;
        return 0;
    }
    if (2 * (t->used + 1) > t->mask + 1) {
        tally_t bigger;
        if (tally_init(&bigger, 2 * (t->mask + 1)) < 0) return -1;
        for (size_t j = 0; j <= t->mask; j++) {
            if (!t->keys[j]) continue;
            const size_t k = tally_slot(&bigger, t->keys[j]);
            bigger.keys[k] = t->keys[j];
            bigger.counts[k] = t->counts[j];
        }
        bigger.used = t->used;
        free(t->keys);
        free(t->counts);
        *t = bigger;
        i = tally_slot(t, stored);
    }
    t->keys[i] = stored;
    t->counts[i] = times;
    t->used++;
    return 0;
}

/* Keys counted a run at a time: consecutive equal keys (a fill along a row) cost one addition
 * to the table. Start with a zero run, add every key of a row, end the row. */
typedef struct {
    uint32_t key, times;
} run_t;

static inline int run_add(tally_t *t, run_t *run, uint32_t key) {
    if (run->times && key != run->key) {
        if (tally_add(t, run->key, run->times) < 0) return -1;
        run->times = 0;
    }
    run->key = key;
    run->times++;
    return 0;
}

static int run_end(tally_t *t, run_t *run) {
    const int status = run->times ? tally_add(t, run->key, run->times) : 0;
    run->times = 0;
    return status;
}

/* Whether the pixel at p (c bytes) equals the one before it. */
static inline int repeats_left(const uint8_t *p, int c) {
    return p[0] == p[-c] && p[1] == p[1 - c] && p[2] == p[2 - c] && (c == 3 || p[3] == p[3 - c]);
}

/* How many of the n pixels from p on repeat the pixel before p, found 16 bytes at a time (so
 * it may stop a few short of the run's end): the rest of a fill along a row, in one step. */
static inline Py_ssize_t fill_ahead(const uint8_t *p, int c, Py_ssize_t n) {
    Py_ssize_t k = 0;
    const Py_ssize_t bytes = n * c;
    while (k + 16 <= bytes && memcmp(p + k, p + k - c, 16) == 0) k += 16;
    return k / c;
}

/* ... in both rows of a pair: the pixels whose (a, b) colour pair is the one before them. */
static inline Py_ssize_t pair_fill_ahead(const uint8_t *ra, int ca, const uint8_t *rb, int cb,
                                         Py_ssize_t n) {
    const Py_ssize_t span = fill_ahead(ra, ca, n);
    return span ? fill_ahead(rb, cb, span) : 0;
}

static inline Py_ssize_t nonzero(const uint8_t *m, Py_ssize_t n) {
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n; i++) count += m[i] != 0;
    return count;
}

/* Of the masked pixels, how many show in b the colour that most pixels of their a colour show
 * across the whole area (ties to the higher colour key). -1 when out of memory. A pixel whose
 * colours in a and b both repeat the pixel to its left starts a fill, counted in one step. */
static Py_ssize_t went_along(const placed_t *p, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t *total) {
    const Py_ssize_t w = p->vm.shape[1], h = p->vm.shape[0];
    const int ca = p->a.channels, cb = p->b.channels;
    tally_t pairs;
    int32_t *target = malloc(sizeof(int32_t) * 32768);
    uint32_t *most = malloc(sizeof(uint32_t) * 32768);
    if (!target || !most || tally_init(&pairs, 1024) < 0) {
        free(target);
        free(most);
        return -1;
    }
    int ok = 1;
    for (Py_ssize_t y = 0; y < h && ok; y++) {
        const uint8_t *ra = p->a.data + (y0 + y) * p->a.stride + x0 * ca;
        const uint8_t *rb = p->b.data + (y0 + y) * p->b.stride + x0 * cb;
        run_t run = {0, 0};
        for (Py_ssize_t x = 0; x < w && ok; x++) {
            ok = run_add(&pairs, &run, key15(ra + x * ca) << 15 | key15(rb + x * cb)) == 0;
            if (x > 0 && x + 1 < w && repeats_left(ra + x * ca, ca) &&
                repeats_left(rb + x * cb, cb)) {
                const Py_ssize_t span =
                    pair_fill_ahead(ra + (x + 1) * ca, ca, rb + (x + 1) * cb, cb, w - x - 1);
                run.times += (uint32_t)span;
                x += span;
            }
        }
        ok = ok && run_end(&pairs, &run) == 0;
    }
    Py_ssize_t hits = -1, seen = 0;
    if (ok) {
        /* Where each a colour went: its commonest pair, the higher b colour on a tie. */
        memset(target, 0xff, sizeof(int32_t) * 32768);
        memset(most, 0, sizeof(uint32_t) * 32768);
        for (size_t j = 0; j <= pairs.mask; j++) {
            if (!pairs.keys[j]) continue;
            const uint32_t pair = pairs.keys[j] - 1, from = pair >> 15, to = pair & 0x7fff;
            const uint32_t count = pairs.counts[j];
            if (count > most[from] || (count == most[from] && (int32_t)to > target[from])) {
                most[from] = count;
                target[from] = (int32_t)to;
            }
        }
        hits = 0;
        for (Py_ssize_t y = 0; y < h; y++) {
            const uint8_t *m = (const uint8_t *)p->vm.buf + y * p->vm.strides[0];
            const uint8_t *ra = p->a.data + (y0 + y) * p->a.stride + x0 * ca;
            const uint8_t *rb = p->b.data + (y0 + y) * p->b.stride + x0 * cb;
            for (Py_ssize_t x = 0; x < w; x++) {
                if (!m[x]) continue;
                const int hit = target[key15(ra + x * ca)] == (int32_t)key15(rb + x * cb);
                seen++;
                hits += hit;
                if (x > 0 && x + 1 < w && repeats_left(ra + x * ca, ca) &&
                    repeats_left(rb + x * cb, cb)) {
                    const Py_ssize_t span =
                        pair_fill_ahead(ra + (x + 1) * ca, ca, rb + (x + 1) * cb, cb, w - x - 1);
                    const Py_ssize_t masked = nonzero(m + x + 1, span);
                    seen += masked;
                    hits += hit * masked;
                    x += span;
                }
            }
        }
    }
    free(pairs.keys);
    free(pairs.counts);
    free(target);
    free(most);
    *total = seen;
    return hits;
}

PyObject *vfa_recoloured(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj;
    Py_ssize_t x, y;
    if (!PyArg_ParseTuple(args, "OOOnn", &a_obj, &b_obj, &mask_obj, &x, &y)) return NULL;
    placed_t p;
    if (vfa_get_placed(a_obj, b_obj, mask_obj, x, y, &p) < 0) return NULL;
    Py_ssize_t hits, total = 0;
    Py_BEGIN_ALLOW_THREADS
    hits = went_along(&p, x, y, &total);
    Py_END_ALLOW_THREADS
    vfa_release_placed(&p);
    if (hits < 0) return PyErr_NoMemory();
    return Py_BuildValue("nn", hits, total);
}

VFA_DOC(vfa_recoloured_doc,
        "recoloured(a, b, mask, x, y) -> (hits, total)\n\n"
        "Over the area of a and b that the bool mask covers when placed at (x, y), each colour of\n"
        "a (in steps of 8 levels a channel) is taken to the colour of b that most of its pixels\n"
        "show (ties to the higher one); returns how many masked pixels show that colour in b, and\n"
        "how many pixels are masked.");

/* ---- one_fill -------------------------------------------------------------------------------- */

/* The longest run of equal keys among n sorted ones. */
static size_t longest_run(const uint32_t *keys, size_t n) {
    size_t best = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && keys[j] == keys[i]; j++) {
        }
        if (j - i > best) best = j - i;
    }
    return best;
}

/* The commonest (a colour, b colour) pair among every step-th masked pixel, in row order. */
static Py_ssize_t commonest_pair(const placed_t *p, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t step,
                                 Py_ssize_t count, Py_ssize_t *sampled) {
    const Py_ssize_t w = p->vm.shape[1], h = p->vm.shape[0];
    const int ca = p->a.channels, cb = p->b.channels;
    const size_t n = (size_t)((count + step - 1) / step);
    uint32_t *scratch, *pairs = keys_alloc(n, &scratch);
    if (!pairs) return -1;
    size_t taken = 0;
    Py_ssize_t skip = 0; /* masked pixels to pass over before the next sample */
    for (Py_ssize_t y = 0; y < h; y++) {
        const uint8_t *m = (const uint8_t *)p->vm.buf + y * p->vm.strides[0];
        for (Py_ssize_t x = 0; x < w; x++) {
            if (!m[x]) continue;
            if (skip) {
                skip--;
                continue;
            }
            skip = step - 1;
            const uint8_t *pa = p->a.data + (y0 + y) * p->a.stride + (x0 + x) * ca;
            const uint8_t *pb = p->b.data + (y0 + y) * p->b.stride + (x0 + x) * cb;
            pairs[taken++] = key15(pa) << 15 | key15(pb);
        }
    }
    sort_keys(pairs, scratch, taken, 30);
    const size_t best = longest_run(pairs, taken);
    free(pairs);
    free(scratch);
    *sampled = (Py_ssize_t)taken;
    return (Py_ssize_t)best;
}

PyObject *vfa_one_fill(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj;
    Py_ssize_t x, y, samples;
    if (!PyArg_ParseTuple(args, "OOOnnn", &a_obj, &b_obj, &mask_obj, &x, &y, &samples))
        return NULL;
    if (samples < 1 || samples > 1 << 20) {
        PyErr_SetString(PyExc_ValueError, "samples must be between 1 and 2**20");
        return NULL;
    }
    placed_t p;
    if (vfa_get_placed(a_obj, b_obj, mask_obj, x, y, &p) < 0) return NULL;
    Py_ssize_t best, sampled = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t count = 0;
    for (Py_ssize_t r = 0; r < p.vm.shape[0]; r++)
        count += nonzero((const uint8_t *)p.vm.buf + r * p.vm.strides[0], p.vm.shape[1]);
    const Py_ssize_t step = count / samples > 1 ? count / samples : 1;
    best = count ? commonest_pair(&p, x, y, step, count, &sampled) : 0;
    Py_END_ALLOW_THREADS
    vfa_release_placed(&p);
    if (best < 0) return PyErr_NoMemory();
    return Py_BuildValue("nn", best, sampled);
}

VFA_DOC(vfa_one_fill_doc,
        "one_fill(a, b, mask, x, y, samples) -> (commonest, sampled)\n\n"
        "Every k-th pixel the bool mask covers when placed at (x, y) in a and b, in row order,\n"
        "k = max(1, masked // samples): how many of them go from the commonest (a colour,\n"
        "b colour) pair, in steps of 8 levels a channel, and how many were taken.");

/* ---- edges ----------------------------------------------------------------------------------- */

/* Row y of the area's luma, one float a pixel; c is a constant 3 or 4 where this is inlined. */
ALWAYS_INLINE void luma_row(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y, Py_ssize_t w,
                            const int c, float *out) {
    const uint8_t *row = src->data + y * src->stride + x0 * c;
    for (Py_ssize_t x = 0; x < w; x++) {
        const uint8_t *p = row + x * c;
        out[x] = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
    }
}

/* The squared luma gradient of a row into g, from the rows above and below it (the row itself
 * at the area's edges, with scale 1): central differences inside, one-sided at the area's
 * edges (numpy.gradient's first order edges). */
ALWAYS_INLINE void gradient_row(const float *up, const float *row, const float *down, float scale,
                            Py_ssize_t w, float *g) {
    for (Py_ssize_t x = 0; x < w; x++) {
        const float gy = (down[x] - up[x]) * scale;
        g[x] = gy * gy;
    }
    const float first = row[1] - row[0], last = row[w - 1] - row[w - 2];
    g[0] += first * first;
    for (Py_ssize_t x = 1; x < w - 1; x++) {
        const float gx = (row[x + 1] - row[x - 1]) * 0.5f;
        g[x] += gx * gx;
    }
    g[w - 1] += last * last;
}

/* The gradient of row y of an area h rows tall whose luma rows are kept in a ring of three
 * (row r at ring + (r % 3) * w, rows up to y + 1 filled). */
ALWAYS_INLINE void ring_gradient(const float *ring, Py_ssize_t y, Py_ssize_t w, Py_ssize_t h,
                                 float *g) {
    const Py_ssize_t above = y > 0 ? y - 1 : 0, below = y < h - 1 ? y + 1 : y;
    gradient_row(ring + (above % 3) * w, ring + (y % 3) * w, ring + (below % 3) * w,
                 (y > 0 && y < h - 1) ? 0.5f : 1.0f, w, g);
}

/* The edge counts of vfa_edges() over a w x h area at (x0, y0), images of ca and cb channels
 * (constants where inlined), in rings of three luma rows la, lb and gradient rows ga, gb. */
ALWAYS_INLINE void count_edges_of(const pixels_t *a, const pixels_t *b, Py_ssize_t x0,
                                  Py_ssize_t y0, Py_ssize_t w, Py_ssize_t h, float s, float f,
                                  float *la, float *lb, float *ga, float *gb, Py_ssize_t *counts,
                                  const int ca, const int cb) {
    luma_row(a, x0, y0, w, ca, la);
    luma_row(b, x0, y0, w, cb, lb);
    for (Py_ssize_t y = 0; y < h; y++) {
        if (y + 1 < h) {
            luma_row(a, x0, y0 + y + 1, w, ca, la + ((y + 1) % 3) * w);
            luma_row(b, x0, y0 + y + 1, w, cb, lb + ((y + 1) % 3) * w);
        }
        ring_gradient(la, y, w, h, ga);
        ring_gradient(lb, y, w, h, gb);
        for (Py_ssize_t x = 0; x < w; x++) {
            const int strong_a = ga[x] > s, strong_b = gb[x] > s;
            counts[0] += strong_a;
            counts[1] += strong_b;
            counts[2] += strong_b & (ga[x] > f);
            counts[3] += strong_a & (gb[x] > f);
        }
    }
}

/* Every value is one product or sum of floats, rounded once: both builds agree (VF_CLONES).
 * With AVX2 a constant channel count lets the luma rows load three-byte pixels with byte
 * shuffles (twice as fast); without, the loop it gives is slower than the general one. */
VF_CLONES
static void count_edges(const pixels_t *a, const pixels_t *b, Py_ssize_t x0, Py_ssize_t y0,
                        Py_ssize_t w, Py_ssize_t h, float s, float f, float *la, float *lb,
                        float *ga, float *gb, Py_ssize_t *counts) {
    const int ca = a->channels, cb = b->channels;
    if (ca == 3 && cb == 3 && vf_has_avx2())
        count_edges_of(a, b, x0, y0, w, h, s, f, la, lb, ga, gb, counts, 3, 3);
    else if (ca == 4 && cb == 4 && vf_has_avx2())
        count_edges_of(a, b, x0, y0, w, h, s, f, la, lb, ga, gb, counts, 4, 4);
    else
        count_edges_of(a, b, x0, y0, w, h, s, f, la, lb, ga, gb, counts, ca, cb);
}

PyObject *vfa_edges(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj;
    Py_ssize_t x0, y0, x1, y1;
    double strong, faint;
    if (!PyArg_ParseTuple(args, "OOnnnndd", &a_obj, &b_obj, &x0, &y0, &x1, &y1, &strong, &faint))
        return NULL;
    Py_buffer va, vb;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    PyObject *result = NULL;
    if (x0 < 0 || y0 < 0 || x1 < x0 || y1 < y0 || x1 > va.shape[1] || y1 > va.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "the area lies outside the images");
        goto done;
    }
    const Py_ssize_t w = x1 - x0, h = y1 - y0;
    /* strong in a, strong in b, strong in b and at least faint in a, strong in a and faint in b */
    Py_ssize_t counts[4] = {0, 0, 0, 0};
    if (w >= 2 && h >= 2) {
        /* Luma is computed a row at a time into rings of three rows: the area may be a whole
         * page, and its gradient needs only the rows beside each. */
        float *la = malloc(sizeof(float) * 3 * (size_t)w);
        float *lb = malloc(sizeof(float) * 3 * (size_t)w);
        float *ga = malloc(sizeof(float) * (size_t)w), *gb = malloc(sizeof(float) * (size_t)w);
        if (!la || !lb || !ga || !gb) {
            free(la);
            free(lb);
            free(ga);
            free(gb);
            PyErr_NoMemory();
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        count_edges(&a, &b, x0, y0, w, h, (float)strong, (float)faint, la, lb, ga, gb, counts);
        Py_END_ALLOW_THREADS
        free(la);
        free(lb);
        free(ga);
        free(gb);
    }
    result = Py_BuildValue("nnnn", counts[0], counts[1], counts[2], counts[3]);
done:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

VFA_DOC(vfa_edges_doc,
        "edges(a, b, x0, y0, x1, y1, strong, faint) -> (strong_a, strong_b, kept, found)\n\n"
        "Over the area [x0, x1) x [y0, y1) of two images of one size, the squared luma gradient\n"
        "(luma 0.299 r + 0.587 g + 0.114 b; central differences inside, one-sided at the area's\n"
        "edges, as numpy.gradient): how many pixels exceed `strong` in a, in b, in b while\n"
        "exceeding `faint` in a, and in a while exceeding `faint` in b. An area less than 2 px\n"
        "across has no gradient.");

/* ---- colours --------------------------------------------------------------------------------- */

PyObject *vfa_colours(PyObject *self, PyObject *args) {
    PyObject *src_obj;
    Py_ssize_t x0, y0, w, h;
    if (!PyArg_ParseTuple(args, "Onnnn", &src_obj, &x0, &y0, &w, &h)) return NULL;
    Py_buffer vs;
    pixels_t src;
    if (vfa_get_pixels(src_obj, &vs, &src, "src") < 0) return NULL;
    PyObject *result = NULL;
    if (vfa_check_area(&vs, x0, y0, w, h) < 0) goto done;
    /* An area of a screenshot is mostly long runs of few colours. */
    tally_t tally;
    if (tally_init(&tally, 1024) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t distinct = 0;
    size_t commonest = 0;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    const int c = src.channels;
    for (Py_ssize_t y = 0; y < h && ok; y++) {
        const uint8_t *row = src.data + (y0 + y) * src.stride + x0 * c;
        run_t run = {0, 0};
        for (Py_ssize_t x = 0; x < w && ok; x++) {
            const uint8_t *p = row + x * c;
            ok = run_add(&tally, &run, (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]) == 0;
        }
        ok = ok && run_end(&tally, &run) == 0;
    }
    for (size_t j = 0; ok && j <= tally.mask; j++) {
        if (!tally.keys[j]) continue;
        distinct++;
        if (tally.counts[j] > commonest) commonest = tally.counts[j];
    }
    Py_END_ALLOW_THREADS
    free(tally.keys);
    free(tally.counts);
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("nn", distinct, (Py_ssize_t)commonest);
done:
    PyBuffer_Release(&vs);
    return result;
}

VFA_DOC(vfa_colours_doc,
        "colours(src, x, y, w, h) -> (distinct, commonest)\n\n"
        "How many distinct (r, g, b) colours the area [x, x + w) x [y, y + h) of src has, and\n"
        "how many pixels show the commonest of them.");
