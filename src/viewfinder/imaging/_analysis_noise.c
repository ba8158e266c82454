/*
 * The noise test (see analysis/noise.py for its reasons): is_noise() judges one region's
 * changed pixels, and noise_run() judges regions one after another straight from the label
 * plane, relabelling each that is noise, until one is not: on a page drawn again a fraction of
 * a pixel off, every one of a hundred regions is noise, and one call judges them all.
 */
#include "_analysis.h"

#include <stdlib.h>

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

PyObject *vfa_noise_run(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *labels_obj, *boxes_obj, *rule_obj;
    Py_ssize_t start, pad;
    int changed_label, darker_label, noise_label;
    if (!PyArg_ParseTuple(args, "OOOOnnO!(ii)i", &a_obj, &b_obj, &labels_obj, &boxes_obj, &start,
                          &pad, &PyTuple_Type, &rule_obj, &changed_label, &darker_label,
                          &noise_label))
        return NULL;
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
    /* 0: nothing of the region is changed any more (a larger region's noise took it), 1: noise. */
    uint8_t *verdicts = malloc((size_t)(n - start + 1));
    Py_ssize_t largest = 1;
    for (Py_ssize_t i = start; i < n; i++) {
        const Py_ssize_t area = boxes[4 * i + 2] * boxes[4 * i + 3];
        if (area > largest) largest = area;
    }
    uint8_t *mask = malloc((size_t)largest);
    Py_ssize_t stop = start;
    int failed = !verdicts || !mask;
    Py_BEGIN_ALLOW_THREADS
    for (; !failed && stop < n; stop++) {
        const Py_ssize_t x = boxes[4 * stop], y = boxes[4 * stop + 1];
        const Py_ssize_t bw = boxes[4 * stop + 2], bh = boxes[4 * stop + 3];
        int any = 0;
        for (Py_ssize_t r = 0; r < bh; r++) {
            const uint8_t *row = (const uint8_t *)vl.buf + (y + r) * vl.strides[0] + x;
            for (Py_ssize_t i = 0; i < bw; i++) {
                const uint8_t v = row[i] == changed_label || row[i] == darker_label;
                mask[r * bw + i] = v;
                any |= v;
            }
        }
        if (!any) {
            verdicts[stop - start] = 0;
            continue;
        }
        const mask_t m = {mask, bw, bw, bh, x, y};
        const int noise = judge(&a, &b, w, h, &m, &rule);
        if (noise < 0) failed = 1;
        if (noise <= 0) break;
        for (Py_ssize_t r = 0; r < bh; r++) {
            uint8_t *row = (uint8_t *)vl.buf + (y + r) * vl.strides[0] + x;
            for (Py_ssize_t i = 0; i < bw; i++)
                if (mask[r * bw + i]) row[i] = (uint8_t)noise_label;
        }
        verdicts[stop - start] = 1;
    }
    Py_END_ALLOW_THREADS
    if (failed) PyErr_NoMemory();
    else result = Py_BuildValue("(ny#)", stop, (const char *)verdicts, stop - start);
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
        "noise_run(a, b, labels, boxes, start, pad, rule, (changed, darker), noise) -> (stop,\n"
        "verdicts)\n\n"
        "Judge boxes[start:] in order, each region's changed pixels being those labelled\n"
        "changed or darker in labels (uint8, covering a and b): a region left with none gets\n"
        "verdict 0, a region is_noise() judges noise is relabelled noise and gets 1; the first\n"
        "that is neither stops the run and is returned as stop (len(boxes) when none did).\n"
        "verdicts (bytes) holds one verdict per region judged, from start.");
