/* envelope(): whether changed pixels stay within their neighbours' range of colours. */
#include "_analysis.h"

/* Every channel of p lies within [lo - 2, hi + 2] of the 3x3 neighbourhood of (x, y) in q. */
static int within(const pixels_t *q, const uint8_t *p, Py_ssize_t x, Py_ssize_t y, Py_ssize_t w,
                  Py_ssize_t h) {
    int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
    for (int dy = -1; dy <= 1; dy++) {
        const uint8_t *row = q->data + clamp(y + dy, 0, h - 1) * q->stride;
        for (int dx = -1; dx <= 1; dx++) {
            const uint8_t *n = row + clamp(x + dx, 0, w - 1) * q->channels;
            for (int ch = 0; ch < 3; ch++) {
                if (n[ch] < lo[ch]) lo[ch] = n[ch];
                if (n[ch] > hi[ch]) hi[ch] = n[ch];
            }
        }
    }
    for (int ch = 0; ch < 3; ch++)
        if (p[ch] + 2 < lo[ch] || p[ch] > hi[ch] + 2) return 0;
    return 1;
}

PyObject *vfa_envelope(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj;
    Py_ssize_t bx, by;
    int skip_edges;
    if (!PyArg_ParseTuple(args, "OOOnnp", &a_obj, &b_obj, &mask_obj, &bx, &by, &skip_edges))
        return NULL;
    Py_buffer va, vb, vm;
    pixels_t a, b;
    PyObject *result = NULL;
    if (vfa_get_pixels(a_obj, &va, &a, "a") < 0) return NULL;
    if (vfa_get_pixels(b_obj, &vb, &b, "b") < 0) goto fail_a;
    if (PyObject_GetBuffer(mask_obj, &vm, PyBUF_STRIDED_RO) < 0) goto fail_b;
    const Py_ssize_t w = va.shape[1], h = va.shape[0];
    if (vm.ndim != 2 || vm.itemsize != 1 || vm.strides[1] != 1 || vm.strides[0] < 0) {
        PyErr_SetString(PyExc_ValueError, "mask must be a 2-D bool array with contiguous rows");
        goto done;
    }
    if (vb.shape[0] != h || vb.shape[1] != w || bx < 0 || by < 0 || bx + vm.shape[1] > w ||
        by + vm.shape[0] > h) {
        PyErr_SetString(PyExc_ValueError, "the images differ in size or the mask lies outside");
        goto done;
    }
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; ok && r < vm.shape[0]; r++) {
        const uint8_t *m = (const uint8_t *)vm.buf + r * vm.strides[0];
        const Py_ssize_t y = by + r;
        if (skip_edges && (y < 2 || y >= h - 2)) continue;
        for (Py_ssize_t i = 0; i < vm.shape[1]; i++) {
            if (!m[i]) continue;
            const Py_ssize_t x = bx + i;
            if (skip_edges && (x < 2 || x >= w - 2)) continue;
            const uint8_t *pa = a.data + y * a.stride + x * a.channels;
            const uint8_t *pb = b.data + y * b.stride + x * b.channels;
            if (!within(&a, pb, x, y, w, h) && !within(&b, pa, x, y, w, h)) {
                ok = 0;
                break;
            }
        }
    }
    Py_END_ALLOW_THREADS
    result = PyBool_FromLong(ok);
done:
    PyBuffer_Release(&vm);
fail_b:
    PyBuffer_Release(&vb);
fail_a:
    PyBuffer_Release(&va);
    return result;
}

VFA_DOC(vfa_envelope_doc,
             "envelope(a, b, mask, x, y, skip_edges) -> bool\n\n"
             "Whether every pixel set in mask (placed at (x, y)) has, in one image or the other,\n"
             "a colour within 2 levels of the range of the other image's 3x3 neighbourhood;\n"
             "skip_edges leaves out pixels within 2 px of the image's border.");

/* ---- flips --------------------------------------------------------------------------------- */

static inline float luma(const uint8_t *p) { return 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]; }

PyObject *vfa_flips(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj;
    Py_ssize_t bx, by, need;
    double share, contrast;
    if (!PyArg_ParseTuple(args, "OOOnnddn", &a_obj, &b_obj, &mask_obj, &bx, &by, &share,
                          &contrast, &need))
        return NULL;
    Py_buffer va, vb, vm;
    pixels_t a, b;
    PyObject *result = NULL;
    if (vfa_get_pixels(a_obj, &va, &a, "a") < 0) return NULL;
    if (vfa_get_pixels(b_obj, &vb, &b, "b") < 0) goto fail_a;
    if (PyObject_GetBuffer(mask_obj, &vm, PyBUF_STRIDED_RO) < 0) goto fail_b;
    const Py_ssize_t w = va.shape[1], h = va.shape[0];
    if (vm.ndim != 2 || vm.itemsize != 1 || vm.strides[1] != 1 || vm.strides[0] < 0) {
        PyErr_SetString(PyExc_ValueError, "mask must be a 2-D bool array with contiguous rows");
        goto done;
    }
    if (vb.shape[0] != h || vb.shape[1] != w || bx < 0 || by < 0 || bx + vm.shape[1] > w ||
        by + vm.shape[0] > h) {
        PyErr_SetString(PyExc_ValueError, "the images differ in size or the mask lies outside");
        goto done;
    }
    const float part = (float)share, least = (float)contrast;
    Py_ssize_t found = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; found < need && r < vm.shape[0]; r++) {
        const uint8_t *m = (const uint8_t *)vm.buf + r * vm.strides[0];
        const Py_ssize_t y = by + r;
        for (Py_ssize_t i = 0; found < need && i < vm.shape[1]; i++) {
            if (!m[i]) continue;
            const Py_ssize_t x = bx + i;
            float lo = 1e9f, hi = -1e9f;
            for (int dy = -1; dy <= 1; dy++) {
                const uint8_t *row = a.data + clamp(y + dy, 0, h - 1) * a.stride;
                for (int dx = -1; dx <= 1; dx++) {
                    const float v = luma(row + clamp(x + dx, 0, w - 1) * a.channels);
                    lo = v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                }
            }
            const float span = hi - lo;
            const float la = luma(a.data + y * a.stride + x * a.channels);
            const float lb = luma(b.data + y * b.stride + x * b.channels);
            const float moved = lb > la ? lb - la : la - lb;
            found += span >= least && moved >= part * span;
        }
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(found);
done:
    PyBuffer_Release(&vm);
fail_b:
    PyBuffer_Release(&vb);
fail_a:
    PyBuffer_Release(&va);
    return result;
}

VFA_DOC(vfa_flips_doc,
        "flips(a, b, mask, x, y, share, contrast, need) -> int\n\n"
        "Count the pixels set in mask (placed at (x, y)) whose luma changed from a to b by at\n"
        "least share of the luma range of a's 3x3 neighbourhood, where that range is at least\n"
        "contrast; counting stops at need.");
