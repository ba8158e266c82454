/*
 * The noise test (see analysis/noise.py for its reasons): is_noise() judges one region's
 * changed pixels, and noise_run() judges regions one after another straight from the label
 * plane, relabelling each that is noise, until one is not: on a page drawn again a fraction of
 * a pixel off, every one of a hundred regions is noise, and one call judges them all.
 */
#include "_analysis.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double moving, still_limit, still, flip_still, flip, flip_contrast, flip_plain;
    Py_ssize_t flips, pad;
} rule_t;

static int parse_rule(PyObject *rule, Py_ssize_t pad, rule_t *r) {
    if (!PyArg_ParseTuple(rule, "dddddddn", &r->moving, &r->still_limit, &r->still,
                          &r->flip_still, &r->flip, &r->flip_contrast, &r->flip_plain, &r->flips))
        return -1;
    r->pad = pad;
    return 0;
}

/* 1 when the masked pixels are noise, 0 when not, -1 when out of memory. The envelope test is
 * cheap and fails fast on new ink; its edge-skipping form is implied by the strict one, so it
 * goes first whatever the motion turns out to be. */
static int judge(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                 const mask_t *m, const rule_t *r) {
    if (!vfa_envelope_holds(a, b, w, h, m, 1)) return 0;
    float residual, unmoved;
    double motion;
    if (vfa_box_residual(a, b, w, h, m->x, m->y, m->width, m->height, r->pad, r->still, &residual,
                         &motion, &unmoved) < 0)
        return -1;
    if ((double)residual > (motion < r->still ? r->still_limit : r->moving)) return 0;
    /* A motion that leaves as much as no motion does explains nothing (a faint line drawn beside
     * a box's edge looks to the estimate like the edge moving): strokes that appeared are then
     * a change, as they are where nothing moved. */
    const int explains = residual < unmoved;
    if ((motion < r->flip_still || !explains) &&
        vfa_count_flips(a, b, w, h, m, (float)r->flip, (float)r->flip_contrast,
                        (float)r->flip_plain, r->flips) >= r->flips)
        return 0;
    return motion >= r->still || vfa_envelope_holds(a, b, w, h, m, 0);
}

PyObject *vfa_is_noise(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj, *rule_obj;
    Py_ssize_t x, y, pad;
    if (!PyArg_ParseTuple(args, "OOOnnnO!", &a_obj, &b_obj, &mask_obj, &x, &y, &pad,
                          &PyTuple_Type, &rule_obj))
        return NULL;
    rule_t rule;
    if (parse_rule(rule_obj, pad, &rule) < 0) return NULL;
    placed_t p;
    if (vfa_get_placed(a_obj, b_obj, mask_obj, x, y, &p) < 0) return NULL;
    const mask_t m = vfa_placed_mask(&p, x, y);
    int found = 0;
    if (m.width > 0 && m.height > 0) {
        Py_BEGIN_ALLOW_THREADS
        found = judge(&p.a, &p.b, p.w, p.h, &m, &rule);
        Py_END_ALLOW_THREADS
    }
    vfa_release_placed(&p);
    if (found < 0) return PyErr_NoMemory();
    return PyBool_FromLong(found);
}

VFA_DOC(vfa_is_noise_doc,
        "is_noise(a, b, mask, x, y, pad, rule) -> bool\n\n"
        "Whether the changed pixels of mask (bool, placed at (x, y) in images a and b of one\n"
        "size) are the same content drawn again: within their neighbours' range of colours, and\n"
        "explained by one sub-pixel motion of the box and pad px around it. rule is (largest\n"
        "residual when moving, when still, motion in px below which still, motion below which\n"
        "no pixel may flip, flip share, flip contrast, flip on plain, flips that make content).");

/* The boxes of a list of (x, y, w, h), every one inside a w x h image; NULL and ValueError. */
static Py_ssize_t *read_boxes(PyObject *list, Py_ssize_t w, Py_ssize_t h, Py_ssize_t *n) {
    PyObject *seq = PySequence_Fast(list, "boxes must be a sequence of (x, y, w, h)");
    if (!seq) return NULL;
    *n = PySequence_Fast_GET_SIZE(seq);
    Py_ssize_t *boxes = malloc(sizeof(Py_ssize_t) * 4 * (size_t)(*n > 0 ? *n : 1));
    if (!boxes) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        Py_ssize_t *box = boxes + 4 * i;
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(item) ||
            !PyArg_ParseTuple(item, "nnnn", &box[0], &box[1], &box[2], &box[3]) || box[0] < 0 ||
            box[1] < 0 || box[2] < 1 || box[3] < 1 || box[0] + box[2] > w || box[1] + box[3] > h) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError,
                            "boxes must be (x, y, w, h) tuples, each inside the images");
            free(boxes);
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    return boxes;
}

/* What a run knows of one region. */
enum { PENDING = -1, EMPTY = 0, NOISE = 1, CHANGE = 2, FAILED = 3 };

/*
 * A run judged by two threads. Judging a region reads the images and its box's labels; only
 * relabelling a region noise writes labels, and only ever from changed to noise, which can
 * change a later region's pixels only where their boxes overlap. So both threads take regions
 * in order and judge them against the labels as they stand, writing nothing, and the calling
 * thread then walks the regions in order as a run of one thread does: a region whose count of
 * changed pixels is the one it was judged with has the same pixels (a count only falls), and
 * keeps its verdict; any other is judged again there.
 */
typedef struct {
    const pixels_t *a, *b;
    Py_ssize_t w, h;
    const Py_buffer *labels;
    int changed, darker;
    const Py_ssize_t *boxes; /* from the run's first region */
    Py_ssize_t n;            /* regions in the run */
    const rule_t *rule;
    int8_t *verdict;
    Py_ssize_t *count;
    atomic_size_t next;      /* the next region to take */
    atomic_size_t first_not; /* the first region judged other than noise or empty */
} ahead_t;

/* The changed pixels of the box (x, y, w, h) into mask, one byte a pixel; returns how many. */
static Py_ssize_t read_mask(const Py_buffer *vl, const Py_ssize_t *box, int changed, int darker,
                            uint8_t *mask) {
    const Py_ssize_t x = box[0], y = box[1], bw = box[2], bh = box[3];
    Py_ssize_t count = 0;
    for (Py_ssize_t r = 0; r < bh; r++) {
        const uint8_t *row = (const uint8_t *)vl->buf + (y + r) * vl->strides[0] + x;
        for (Py_ssize_t i = 0; i < bw; i++) {
            const uint8_t v = row[i] == changed || row[i] == darker;
            mask[r * bw + i] = v;
            count += v;
        }
    }
    return count;
}

static int judge_box(const ahead_t *s, const Py_ssize_t *box, const uint8_t *mask,
                     Py_ssize_t count) {
    if (!count) return EMPTY;
    const mask_t m = {mask, box[2], box[2], box[3], box[0], box[1]};
    const int noise = judge(s->a, s->b, s->w, s->h, &m, s->rule);
    return noise < 0 ? FAILED : (noise ? NOISE : CHANGE);
}

/* Judges the next region not yet taken, unless none is left before one judged a change: 0
 * then. */
static int take_region(ahead_t *s, uint8_t *mask) {
    const size_t k = atomic_fetch_add(&s->next, 1);
    if (k >= (size_t)s->n || k > atomic_load(&s->first_not)) return 0;
    const Py_ssize_t *box = s->boxes + 4 * k;
    s->count[k] = read_mask(s->labels, box, s->changed, s->darker, mask);
    s->verdict[k] = (int8_t)judge_box(s, box, mask, s->count[k]);
    if (s->verdict[k] >= CHANGE) {
        size_t seen = atomic_load(&s->first_not);
        while (k < seen && !atomic_compare_exchange_weak(&s->first_not, &seen, k)) continue;
    }
    return 1;
}

typedef struct {
    ahead_t *run;
    uint8_t *mask;
} helper_t;

static void *help(void *arg) {
    helper_t *h = arg;
    while (take_region(h->run, h->mask)) continue;
    return NULL;
}

/* Window pixels (box and pad around it) left to judge above which a second thread is started:
 * one costs some 40 us to start and stop, what judging 5,000 to 15,000 window pixels takes
 * (2 to 8 ns each), so below a few times that it would not pay. */
#define HELP_ABOVE 40000

/* Judges the run's regions in both threads while any is left before a change; the first one
 * alone first, so that a run that stops at once (a real change) starts no thread. */
static void judge_ahead(ahead_t *s, uint8_t *mask, uint8_t *helper_mask) {
    if (!take_region(s, mask)) return;
    Py_ssize_t window = 0;
    const Py_ssize_t pad = s->rule->pad;
    for (Py_ssize_t k = 1; k < s->n && window <= HELP_ABOVE; k++)
        window += (s->boxes[4 * k + 2] + 2 * pad) * (s->boxes[4 * k + 3] + 2 * pad);
    pthread_t thread;
    helper_t helper = {s, helper_mask};
    const int helped = s->verdict[0] < CHANGE && window > HELP_ABOVE &&
                       pthread_create(&thread, NULL, help, &helper) == 0;
    while (take_region(s, mask)) continue;
    if (helped) pthread_join(thread, NULL);
}

PyObject *vfa_noise_run(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *labels_obj, *boxes_obj, *rule_obj;
    Py_ssize_t start, pad;
    int changed_label, darker_label, noise_label, threads = 1;
    if (!PyArg_ParseTuple(args, "OOOOnnO!(ii)i|i", &a_obj, &b_obj, &labels_obj, &boxes_obj,
                          &start, &pad, &PyTuple_Type, &rule_obj, &changed_label, &darker_label,
                          &noise_label, &threads))
        return NULL;
    if (threads != 1 && threads != 2) {
        PyErr_SetString(PyExc_ValueError, "threads must be 1 or 2");
        return NULL;
    }
    rule_t rule;
    if (parse_rule(rule_obj, pad, &rule) < 0) return NULL;
    Py_buffer va, vb, vl;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(labels_obj, &vl, PyBUF_STRIDES | PyBUF_WRITABLE) < 0) goto fail;
    const Py_ssize_t w = va.shape[1], h = va.shape[0];
    if (vl.ndim != 2 || vl.itemsize != 1 || vl.strides[1] != 1 || vl.strides[0] < 0 ||
        vl.shape[0] < h || vl.shape[1] < w) {
        PyErr_SetString(
            PyExc_ValueError,
            "labels must be a 2-D uint8 array with contiguous rows covering the images");
        goto done;
    }
    Py_ssize_t n = 0;
    Py_ssize_t *boxes = read_boxes(boxes_obj, w, h, &n);
    if (!boxes) goto done;
    if (start < 0 || start > n) {
        PyErr_SetString(PyExc_ValueError, "start must lie within the boxes");
        free(boxes);
        goto done;
    }
    const Py_ssize_t left = n - start;
    Py_ssize_t largest = 1;
    for (Py_ssize_t i = start; i < n; i++) {
        const Py_ssize_t area = boxes[4 * i + 2] * boxes[4 * i + 3];
        if (area > largest) largest = area;
    }
    /* 0: nothing of the region is changed any more (a larger region's noise took it), 1: noise. */
    uint8_t *verdicts = malloc((size_t)left + 1);
    uint8_t *mask = malloc((size_t)largest * (threads > 1 ? 2 : 1));
    ahead_t run = {&a, &b, w, h, &vl, changed_label, darker_label, boxes + 4 * start, left, &rule,
                   NULL, NULL, 0, (size_t)left};
    const int ahead = threads > 1 && left > 1;
    if (ahead) {
        run.verdict = malloc((size_t)left);
        run.count = malloc(sizeof(Py_ssize_t) * (size_t)left);
    }
    int failed = !verdicts || !mask || (ahead && (!run.verdict || !run.count));
    Py_ssize_t stop = start;
    Py_BEGIN_ALLOW_THREADS
    if (!failed && ahead) {
        memset(run.verdict, PENDING, (size_t)left);
        judge_ahead(&run, mask, mask + largest);
    }
    for (; !failed && stop < n; stop++) {
        const Py_ssize_t k = stop - start, *box = boxes + 4 * stop;
        const Py_ssize_t count = read_mask(&vl, box, changed_label, darker_label, mask);
        const int verdict = ahead && run.verdict[k] != PENDING && run.count[k] == count
                                ? run.verdict[k]
                                : judge_box(&run, box, mask, count);
        if (verdict == FAILED) failed = 1;
        if (verdict == FAILED || verdict == CHANGE) break;
        verdicts[k] = verdict == NOISE;
        if (verdict == EMPTY) continue;
        for (Py_ssize_t r = 0; r < box[3]; r++) {
            uint8_t *row = (uint8_t *)vl.buf + (box[1] + r) * vl.strides[0] + box[0];
            const uint8_t *marked = mask + r * box[2];
            /* Every byte written, as a select: a branch per pixel mispredicted on glyphs. */
            for (Py_ssize_t i = 0; i < box[2]; i++)
                row[i] = marked[i] ? (uint8_t)noise_label : row[i];
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) PyErr_NoMemory();
    else result = Py_BuildValue("(ny#)", stop, (const char *)verdicts, stop - start);
    free(run.verdict);
    free(run.count);
    free(verdicts);
    free(mask);
    free(boxes);
done:
    PyBuffer_Release(&vl);
fail:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

VFA_DOC(vfa_noise_run_doc,
        "noise_run(a, b, labels, boxes, start, pad, rule, (changed, darker), noise, threads=1)\n"
        "-> (stop, verdicts)\n\n"
        "Judge boxes[start:] in order, each region's changed pixels being those labelled\n"
        "changed or darker in labels (uint8, covering a and b): a region left with none gets\n"
        "verdict 0, a region is_noise() judges noise is relabelled noise and gets 1; the first\n"
        "that is neither stops the run and is returned as stop (len(boxes) when none did).\n"
        "verdicts (bytes) holds one verdict per region judged, from start. With threads=2, a\n"
        "second thread judges regions ahead once the first is noise and enough is left, with\n"
        "the same result.");
