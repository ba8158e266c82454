/*
 * The move search's exact checks: matches() checks one translation pixel by pixel, rank()
 * picks among many the one that explains most of a region's pixels, and carried() tells how
 * much of what a move carried landed on content that stayed (votes() in _analysis_votes.c
 * proposes translations).
 */
#include "_analysis.h"

#include <stdlib.h>

static inline uint64_t rgb(const uint8_t *p) {
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16);
}

/* ---- matches ------------------------------------------------------------------------------- */

PyObject *vfa_matches(PyObject *self, PyObject *args) {
    PyObject *here_obj, *there_obj, *ys_obj, *xs_obj, *ok_obj;
    Py_ssize_t dx, dy;
    long ref;
    if (!PyArg_ParseTuple(args, "OOOOnnOl", &here_obj, &there_obj, &ys_obj, &xs_obj, &dx, &dy,
                          &ok_obj, &ref))
        return NULL;
    Py_buffer vh, vt, vy, vx, vo;
    pixels_t here, there;
    PyObject *result = NULL;
    if (vfa_get_pixels(here_obj, &vh, &here, "here") < 0) return NULL;
    if (vfa_get_pixels(there_obj, &vt, &there, "there") < 0) goto fail_h;
    if (vfa_get_coords(ys_obj, &vy, PyBUF_STRIDED_RO, "ys") < 0) goto fail_t;
    if (vfa_get_coords(xs_obj, &vx, PyBUF_STRIDED_RO, "xs") < 0) goto fail_y;
    if (PyObject_GetBuffer(ok_obj, &vo, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto fail_x;
    const Py_ssize_t n = vy.shape[0], w = vt.shape[1], h = vt.shape[0];
    if (vx.shape[0] != n || vo.len != n || vo.itemsize != 1) {
        PyErr_SetString(PyExc_ValueError, "ys, xs and ok must have one length");
        goto done;
    }
    if (vh.shape[0] != h || vh.shape[1] != w) {
        PyErr_SetString(PyExc_ValueError, "here and there must have one size");
        goto done;
    }
    const char *ys = vy.buf, *xs = vx.buf;
    uint8_t *ok = vo.buf;
    Py_ssize_t matched = 0, same = 0, bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        const Py_ssize_t y = *(const coord_t *)(ys + i * vy.strides[0]);
        const Py_ssize_t x = *(const coord_t *)(xs + i * vx.strides[0]);
        ok[i] = 0;
        if (y < 0 || y >= h || x < 0 || x >= w) {
            bad = 1;
            break;
        }
        const Py_ssize_t ty = y + dy, tx = x + dx;
        if (ty < 0 || ty >= h || tx < 0 || tx >= w) continue;
        const uint8_t *p = here.data + y * here.stride + x * here.channels;
        const uint8_t *q = there.data + ty * there.stride + tx * there.channels;
        if (abs(p[0] - q[0]) > 3 || abs(p[1] - q[1]) > 3 || abs(p[2] - q[2]) > 3) continue;
        ok[i] = 1;
        matched++;
        const long colour = (long)rgb(p);
        if (ref < 0) ref = colour;
        same += colour == ref;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "a pixel of ys, xs lies outside the image");
        goto done;
    }
    result = Py_BuildValue("nnl", matched, same, ref);
done:
    PyBuffer_Release(&vo);
fail_x:
    PyBuffer_Release(&vx);
fail_y:
    PyBuffer_Release(&vy);
fail_t:
    PyBuffer_Release(&vt);
fail_h:
    PyBuffer_Release(&vh);
    return result;
}

VFA_DOC(vfa_matches_doc,
             "matches(here, there, ys, xs, dx, dy, ok, ref) -> (matched, same, ref)\n\n"
             "For each pixel (ys[i], xs[i]) of here, set ok[i] when there at (x + dx, y + dy) has\n"
             "its colour within 3 levels per channel. Counts the matches, and those whose colour\n"
             "is exactly ref (0xBBGGRR; -1 takes the first match's colour, which is returned).");


/* ---- rank ---------------------------------------------------------------------------------- */

/* Without branches: whether a pixel matches is as good as a coin toss, and mispredictions cost
 * more than the comparisons. */
static inline int near3(const uint8_t *p, const uint8_t *q) {
    return ((unsigned)(p[0] - q[0] + 3) <= 6) & ((unsigned)(p[1] - q[1] + 3) <= 6) &
           ((unsigned)(p[2] - q[2] + 3) <= 6);
}

typedef struct {
    Py_ssize_t dx, dy, arrived, left;
} vector_t;

typedef struct {
    const pixels_t *a, *b;
    Py_ssize_t width, height;
    const coord_t *ys, *xs;
    Py_ssize_t n;
} sample_t;

/* Whether (arrived, left) ranks strictly above bar's: more arrived, or as many and more left. */
static inline int ranks_above(Py_ssize_t arrived, Py_ssize_t left, const vector_t *bar) {
    return arrived > bar->arrived || (arrived == bar->arrived && left > bar->left);
}

/* Pixel (y, x) of the sample, whose colours in a and b are at pa and pb: adds to arrived
 * whether the candidate there shows what the base had at p - d, to left whether the base's
 * content there shows in the candidate at p + d. Outside the image, the pixel is compared with
 * itself and the answer dropped, without a branch. */
ALWAYS_INLINE void explain(const sample_t *s, Py_ssize_t y, Py_ssize_t x, const uint8_t *pa,
                           const uint8_t *pb, Py_ssize_t dx, Py_ssize_t dy, Py_ssize_t *arrived,
                           Py_ssize_t *left) {
    const pixels_t *a = s->a, *b = s->b;
    const Py_ssize_t fy = y - dy, fx = x - dx, ty = y + dy, tx = x + dx;
    const int from = ((size_t)fy < (size_t)s->height) & ((size_t)fx < (size_t)s->width);
    const int to = ((size_t)ty < (size_t)s->height) & ((size_t)tx < (size_t)s->width);
    *arrived += from & near3(pb, from ? a->data + fy * a->stride + fx * a->channels : pa);
    *left += to & near3(pa, to ? b->data + ty * b->stride + tx * b->channels : pb);
}

ALWAYS_INLINE const uint8_t *at(const pixels_t *p, Py_ssize_t y, Py_ssize_t x) {
    return p->data + y * p->stride + x * p->channels;
}

/* How many of every step-th pixel of the sample d explains where the content arrived and where
 * it left (explain()). With `whole`, stops at the first pixel not explained both ways and says
 * whether there was none. With a bar, stops (and says 0) once even every pixel left explained
 * both ways could not rank d above it. */
static int score(const sample_t *s, Py_ssize_t step, vector_t *v, int whole,
                 const vector_t *bar) {
    const Py_ssize_t total = (s->n + step - 1) / step;
    Py_ssize_t arrived = 0, left = 0, taken = 0;
    for (Py_ssize_t i = 0; i < s->n; i += step) {
        const Py_ssize_t y = s->ys[i], x = s->xs[i];
        explain(s, y, x, at(s->a, y, x), at(s->b, y, x), v->dx, v->dy, &arrived, &left);
        taken++;
        if (whole && (arrived != taken || left != taken)) return 0;
        /* Every 64 pixels: could the rest, explained both ways, still lift d above the bar? */
        if (bar && taken % 64 == 0 &&
            !ranks_above(arrived + total - taken, left + total - taken, bar))
            return 0;
    }
    v->arrived = arrived;
    v->left = left;
    return !bar || ranks_above(arrived, left, bar);
}

static int shortest_first(const void *p, const void *q) {
    const vector_t *u = p, *v = q;
    const Py_ssize_t lu = labs(u->dx) + labs(u->dy), lv = labs(v->dx) + labs(v->dy);
    if (lu != lv) return lu < lv ? -1 : 1;
    if (u->dx != v->dx) return u->dx < v->dx ? -1 : 1;
    return (u->dy > v->dy) - (u->dy < v->dy);
}

/* score() for all k translations of v at once, a pixel at a time: the pixels they read around
 * one pixel lie close together in memory, as they would not taken one translation after another
 * over the whole sample (a quarter faster). */
static void score_all(const sample_t *s, Py_ssize_t step, vector_t *v, Py_ssize_t k) {
    for (Py_ssize_t j = 0; j < k; j++) v[j].arrived = v[j].left = 0;
    for (Py_ssize_t i = 0; i < s->n; i += step) {
        const Py_ssize_t y = s->ys[i], x = s->xs[i];
        const uint8_t *pa = at(s->a, y, x), *pb = at(s->b, y, x);
        for (Py_ssize_t j = 0; j < k; j++)
            explain(s, y, x, pa, pb, v[j].dx, v[j].dy, &v[j].arrived, &v[j].left);
    }
}

/* Scores the k translations of v on every step-th pixel of the sample and moves the best `keep`
 * (at most 4) to its front, most explained first, ties in the order given; returns how many.
 * A few are scored one by one: once `keep` are held, one that cannot rank above the last of
 * them is given up part way, as it could not enter them. */
static Py_ssize_t most_explained(const sample_t *s, Py_ssize_t step, vector_t *v, Py_ssize_t k,
                                 Py_ssize_t keep) {
    vector_t best[4];
    Py_ssize_t held = 0;
    const int scored = k > 8;
    if (scored) score_all(s, step, v, k);
    for (Py_ssize_t j = 0; j < k; j++) {
        const vector_t *bar = held == keep ? &best[keep - 1] : NULL;
        if (scored ? bar && !ranks_above(v[j].arrived, v[j].left, bar)
                   : !score(s, step, &v[j], 0, bar))
            continue;
        Py_ssize_t to = held < keep ? held++ : keep - 1;
        while (to > 0 && ranks_above(v[j].arrived, v[j].left, &best[to - 1])) {
            best[to] = best[to - 1];
            to--;
        }
        best[to] = v[j];
    }
    for (Py_ssize_t j = 0; j < held; j++) v[j] = best[j];
    return held;
}

/* The pick among k translations (sorted shortest first), or -1. Exact: the first that explains
 * every one of a sample of at most 4096 pixels both ways. Ranked: all are scored on a sample
 * of about 256 pixels, the best four on about 4096, the winner being the first of the best;
 * those four, best first, are copied to best (if given) and their number to *held. The pick
 * among any translations that include these k is the pick among those four and the others:
 * each is scored alone, so none of the rest could enter the four. */
static Py_ssize_t pick(const sample_t *s, vector_t *v, Py_ssize_t k, int exact, vector_t *best,
                       Py_ssize_t *held) {
    if (held) *held = 0;
    if (k == 0) return -1;
    if (exact) {
        const Py_ssize_t step = s->n / 4096 > 1 ? s->n / 4096 : 1;
        for (Py_ssize_t j = 0; j < k; j++)
            if (score(s, step, &v[j], 1, NULL)) return j;
        return -1;
    }
    static const Py_ssize_t sizes[2] = {256, 4096}, keeps[2] = {4, 1};
    for (int round = 0; round < 2; round++) {
        const Py_ssize_t step = s->n / sizes[round] > 1 ? s->n / sizes[round] : 1;
        k = most_explained(s, step, v, k, keeps[round]);
        if (round == 0 && best) {
            memcpy(best, v, sizeof(vector_t) * (size_t)k);
            *held = k;
        }
        if (step == 1) break;
    }
    return 0;
}

/* The translations of `tried` (an iterable of (dx, dy)), shortest first: -1 and an exception,
 * or their number (*out to be freed). */
static Py_ssize_t read_vectors(PyObject *tried, vector_t **out) {
    PyObject *seq = PySequence_Fast(tried, "tried must be an iterable of (dx, dy) pairs");
    if (!seq) return -1;
    const Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    vector_t *v = malloc(sizeof(vector_t) * (size_t)(k > 0 ? k : 1));
    if (!v) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, j);
        v[j] = (vector_t){0, 0, 0, 0};
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "nn", &v[j].dx, &v[j].dy)) {
            if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_SetString(PyExc_TypeError, "tried must be an iterable of (dx, dy) pairs");
            }
            free(v);
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    qsort(v, (size_t)k, sizeof(vector_t), shortest_first);
    *out = v;
    return k;
}

/* ys and xs as contiguous int32 arrays of one length, every pixel inside the image. */
static int get_sample(PyObject *ys_obj, PyObject *xs_obj, Py_buffer *vy, Py_buffer *vx,
                      sample_t *s) {
    if (vfa_get_coords(ys_obj, vy, PyBUF_C_CONTIGUOUS, "ys") < 0) return -1;
    if (vfa_get_coords(xs_obj, vx, PyBUF_C_CONTIGUOUS, "xs") < 0) {
        PyBuffer_Release(vy);
        return -1;
    }
    const char *problem = NULL;
    if (vy->shape[0] != vx->shape[0]) problem = "ys and xs must have one length";
    s->ys = vy->buf;
    s->xs = vx->buf;
    s->n = vy->shape[0];
    for (Py_ssize_t i = 0; !problem && i < s->n; i++)
        if (s->ys[i] < 0 || s->ys[i] >= s->height || s->xs[i] < 0 || s->xs[i] >= s->width)
            problem = "a pixel of ys, xs lies outside the image";
    if (problem) {
        PyErr_SetString(PyExc_ValueError, problem);
        PyBuffer_Release(vx);
        PyBuffer_Release(vy);
        return -1;
    }
    return 0;
}

PyObject *vfa_rank(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *ys_obj, *xs_obj, *tried;
    int exact, keep = 0;
    if (!PyArg_ParseTuple(args, "OOOOOp|p", &a_obj, &b_obj, &ys_obj, &xs_obj, &tried, &exact,
                          &keep))
        return NULL;
    Py_buffer va, vb, vy, vx;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    PyObject *result = NULL;
    sample_t s = {&a, &b, va.shape[1], va.shape[0], NULL, NULL, 0};
    if (get_sample(ys_obj, xs_obj, &vy, &vx, &s) < 0) goto fail;
    vector_t *v = NULL;
    const Py_ssize_t k = read_vectors(tried, &v);
    if (k >= 0) {
        Py_ssize_t at, held = 0;
        vector_t best[4];
        Py_BEGIN_ALLOW_THREADS
        at = pick(&s, v, k, exact, keep ? best : NULL, keep ? &held : NULL);
        Py_END_ALLOW_THREADS
        PyObject *found = at < 0 ? Py_NewRef(Py_None) : Py_BuildValue("(nn)", v[at].dx, v[at].dy);
        if (keep && found) {
            PyObject *top = PyList_New(held);
            for (Py_ssize_t j = 0; top && j < held; j++) {
                PyObject *d = Py_BuildValue("(nn)", best[j].dx, best[j].dy);
                if (!d) Py_CLEAR(top);
                else PyList_SET_ITEM(top, j, d);
            }
            result = top ? PyTuple_Pack(2, found, top) : NULL;
            Py_XDECREF(top);
            Py_DECREF(found);
        } else {
            result = found;
        }
        free(v);
    }
    PyBuffer_Release(&vx);
    PyBuffer_Release(&vy);
fail:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

VFA_DOC(vfa_rank_doc,
        "rank(a, b, ys, xs, tried, exact, keep=False) -> (dx, dy) or None\n\n"
        "Of the translations in tried, taken shortest first (|dx| + |dy|, then dx, then dy), the\n"
        "one that best explains the pixels (ys[i], xs[i]): where b shows a's colour from p - d\n"
        "(arrived) and a's colour shows in b at p + d (left), within 3 levels per channel.\n"
        "exact: the first that explains every one of a sample of at most 4096 of the pixels both\n"
        "ways, or None. Otherwise: all ranked by (arrived, left) on a sample of about 256, the\n"
        "best four again on about 4096, ties to the shorter; None only when tried is empty.\n"
        "keep: (the pick, the best four of the ranked first round, best first; none when\n"
        "exact); the pick among any translations that include tried is the pick among those\n"
        "four and the rest.");

/* ---- carried ------------------------------------------------------------------------------- */

static inline int is_ink(const uint8_t *p, const int *colour, int level) {
    return abs(p[0] - colour[0]) > level || abs(p[1] - colour[1]) > level ||
           abs(p[2] - colour[2]) > level;
}

/* Whether the base colour at p lies within the candidate's 3x3 range at p + d (edges
 * repeated), give or take tolerance: content the move carried, drawn again at another
 * sub-pixel phase. */
static int went_along(const sample_t *s, Py_ssize_t y, Py_ssize_t x, Py_ssize_t dx, Py_ssize_t dy,
                      int tolerance) {
    const Py_ssize_t ty = y + dy, tx = x + dx, w = s->width, h = s->height;
    if (ty < 0 || ty >= h || tx < 0 || tx >= w) return 0;
    int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
    for (Py_ssize_t oy = -1; oy <= 1; oy++) {
        const uint8_t *row = s->b->data + clamp(ty + oy, 0, h - 1) * s->b->stride;
        for (Py_ssize_t ox = -1; ox <= 1; ox++) {
            const uint8_t *q = row + clamp(tx + ox, 0, w - 1) * s->b->channels;
            for (int c = 0; c < 3; c++) {
                if (q[c] < lo[c]) lo[c] = q[c];
                if (q[c] > hi[c]) hi[c] = q[c];
            }
        }
    }
    const uint8_t *p = s->a->data + y * s->a->stride + x * s->a->channels;
    for (int c = 0; c < 3; c++)
        if (p[c] < lo[c] - tolerance || p[c] > hi[c] + tolerance) return 0;
    return 1;
}

PyObject *vfa_carried(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *ys_obj, *xs_obj, *arrived_obj, *left_obj;
    Py_ssize_t dx, dy;
    int colour[3], level, tolerance;
    if (!PyArg_ParseTuple(args, "OOOOOOnn(iii)ii", &a_obj, &b_obj, &ys_obj, &xs_obj, &arrived_obj,
                          &left_obj, &dx, &dy, &colour[0], &colour[1], &colour[2], &level,
                          &tolerance))
        return NULL;
    Py_buffer va, vb, vy, vx, var, vle;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    PyObject *result = NULL;
    sample_t s = {&a, &b, va.shape[1], va.shape[0], NULL, NULL, 0};
    if (get_sample(ys_obj, xs_obj, &vy, &vx, &s) < 0) goto fail;
    if (PyObject_GetBuffer(arrived_obj, &var, PyBUF_C_CONTIGUOUS) < 0) goto fail_sample;
    if (PyObject_GetBuffer(left_obj, &vle, PyBUF_C_CONTIGUOUS) < 0) goto fail_arrived;
    if (var.len != s.n || vle.len != s.n || var.itemsize != 1 || vle.itemsize != 1) {
        PyErr_SetString(PyExc_ValueError, "arrived and left must be bool, one per pixel");
        goto done;
    }
    const uint8_t *arrived = var.buf, *left = vle.buf;
    Py_ssize_t ink = 0, covered = 0, step = 1;
    Py_BEGIN_ALLOW_THREADS
    /* Every step-th arrived pixel, at most 4096 of them, counted and scaled back up. */
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < s.n; i++) total += arrived[i] != 0;
    step = total / 4096 > 1 ? total / 4096 : 1;
    for (Py_ssize_t i = 0, skip = 0; i < s.n; i++) {
        if (!arrived[i]) continue;
        if (skip) {
            skip--;
            continue;
        }
        skip = step - 1;
        const Py_ssize_t y = s.ys[i], x = s.xs[i];
        if (!is_ink(b.data + y * b.stride + x * b.channels, colour, level)) continue;
        ink++;
        if (left[i] || !is_ink(a.data + y * a.stride + x * a.channels, colour, level)) continue;
        covered += !went_along(&s, y, x, dx, dy, tolerance);
    }
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(nn)", ink * step, covered * step);
done:
    PyBuffer_Release(&vle);
fail_arrived:
    PyBuffer_Release(&var);
fail_sample:
    PyBuffer_Release(&vx);
    PyBuffer_Release(&vy);
fail:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

VFA_DOC(vfa_carried_doc,
        "carried(a, b, ys, xs, arrived, left, dx, dy, colour, level, tolerance) -> (ink,\n"
        "covered)\n\n"
        "Of the pixels (ys[i], xs[i]) where a move by (dx, dy) arrived (every step-th, at most\n"
        "4096, counts scaled back up): ink, those of b more than level from colour (r, g, b) in\n"
        "some channel; covered, those that are ink in a and b, did not leave (left[i] false) and\n"
        "whose colour in a lies outside b's 3x3 range at p + d widened by tolerance.");

/* ---- frame colour -------------------------------------------------------------------------- */

static int by_value(const void *p, const void *q) {
    const uint32_t u = *(const uint32_t *)p, v = *(const uint32_t *)q;
    return (u > v) - (u < v);
}

PyObject *vfa_frame_colour(PyObject *self, PyObject *args) {
    PyObject *src_obj;
    Py_ssize_t x0, y0, x1, y1;
    if (!PyArg_ParseTuple(args, "Onnnn", &src_obj, &x0, &y0, &x1, &y1)) return NULL;
    Py_buffer vs;
    pixels_t src;
    if (vfa_get_pixels(src_obj, &vs, &src, "src") < 0) return NULL;
    PyObject *result = NULL;
    if (vfa_check_area(&vs, x0, y0, x1 - x0, y1 - y0) < 0) goto done;
    const Py_ssize_t w = x1 - x0, h = y1 - y0, n = 2 * (w + h);
    uint32_t *frame = malloc(sizeof(uint32_t) * (size_t)n);
    if (!frame) {
        PyErr_NoMemory();
        goto done;
    }
    uint32_t common = 0;
    Py_BEGIN_ALLOW_THREADS
#define PACK(y, x)                                                                      \
    (((const uint8_t *)src.data + (y) * src.stride + (x) * src.channels)[0] << 16 |     \
     ((const uint8_t *)src.data + (y) * src.stride + (x) * src.channels)[1] << 8 |      \
     ((const uint8_t *)src.data + (y) * src.stride + (x) * src.channels)[2])
    Py_ssize_t k = 0;
    for (Py_ssize_t x = x0; x < x1; x++) frame[k++] = (uint32_t)PACK(y0, x);
    for (Py_ssize_t x = x0; x < x1; x++) frame[k++] = (uint32_t)PACK(y1 - 1, x);
    for (Py_ssize_t y = y0; y < y1; y++) frame[k++] = (uint32_t)PACK(y, x0);
    for (Py_ssize_t y = y0; y < y1; y++) frame[k++] = (uint32_t)PACK(y, x1 - 1);
#undef PACK
    qsort(frame, (size_t)n, sizeof(uint32_t), by_value);
    Py_ssize_t best = 0;
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t j = i;
        while (j < n && frame[j] == frame[i]) j++;
        if (j - i > best) {
            best = j - i;
            common = frame[i];
        }
        i = j;
    }
    Py_END_ALLOW_THREADS
    free(frame);
    result = Py_BuildValue("(iii)", (int)(common >> 16), (int)((common >> 8) & 255),
                           (int)(common & 255));
done:
    PyBuffer_Release(&vs);
    return result;
}

VFA_DOC(vfa_frame_colour_doc,
        "frame_colour(src, x0, y0, x1, y1) -> (r, g, b)\n\n"
        "The commonest colour of the area's frame: its first and last rows and its first and\n"
        "last columns, each counted in full (corners count twice), ties to the smallest\n"
        "0xRRGGBB.");
