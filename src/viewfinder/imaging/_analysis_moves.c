/*
 * The move search's kernels: signatures() hashes the rows or columns of an area so that moved
 * lines can be found by their hash, matches() checks a translation pixel by pixel.
 */
#include "_analysis.h"

#include <stdlib.h>

/* A line's hash is a polynomial over its pixels' (r, g, b), mixed at the end; equal lines have
 * equal hashes and a collision only costs a candidate that the exact check then rejects. */
#define SIG_MUL 0x9E3779B97F4A7C15ull

static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static inline uint64_t rgb(const uint8_t *p) {
    return (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16);
}

PyObject *vfa_signatures(PyObject *self, PyObject *args) {
    PyObject *src_obj, *hash_obj, *flat_obj;
    Py_ssize_t x0, y0, x1, y1;
    int columns;
    if (!PyArg_ParseTuple(args, "OnnnnpOO", &src_obj, &x0, &y0, &x1, &y1, &columns, &hash_obj,
                          &flat_obj))
        return NULL;
    Py_buffer vs, vh, vf;
    pixels_t src;
    if (vfa_get_pixels(src_obj, &vs, &src, "src") < 0) return NULL;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(hash_obj, &vh, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto fail_s;
    if (PyObject_GetBuffer(flat_obj, &vf, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto fail_h;
    if (x0 < 0 || y0 < 0 || x1 < x0 || y1 < y0 || x1 > vs.shape[1] || y1 > vs.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "the area lies outside the image");
        goto done;
    }
    const Py_ssize_t lines = columns ? x1 - x0 : y1 - y0;
    if (vh.len != lines * 8 || vh.itemsize != 8 || vf.len != lines || vf.itemsize != 1) {
        PyErr_SetString(PyExc_ValueError,
                        "hashes must be uint64 and flat bool, one per line of the area");
        goto done;
    }
    uint64_t *hash = vh.buf;
    uint8_t *flat = vf.buf;
    const int c = src.channels;
    Py_BEGIN_ALLOW_THREADS
    if (!columns) {
        /* Four interleaved polynomials a row: one chain of multiplies would wait on itself. */
        const Py_ssize_t n = x1 - x0;
        for (Py_ssize_t y = y0; y < y1; y++) {
            const uint8_t *row = src.data + y * src.stride + x0 * c;
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
    } else {
        /* Row by row, every column's hash advanced at once: memory is read in order. */
        const uint8_t *top = src.data + y0 * src.stride + x0 * c;
        for (Py_ssize_t i = 0; i < lines; i++) {
            hash[i] = 0;
            flat[i] = 1;
        }
        for (Py_ssize_t y = y0; y < y1; y++) {
            const uint8_t *row = src.data + y * src.stride + x0 * c;
            for (Py_ssize_t i = 0; i < lines; i++) {
                const uint64_t v = rgb(row + i * c);
                hash[i] = hash[i] * SIG_MUL + v + 1;
                flat[i] &= (uint8_t)(v == rgb(top + i * c));
            }
        }
        for (Py_ssize_t i = 0; i < lines; i++) hash[i] = mix64(hash[i]);
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&vf);
fail_h:
    PyBuffer_Release(&vh);
fail_s:
    PyBuffer_Release(&vs);
    return result;
}

VFA_DOC(vfa_signatures_doc,
             "signatures(src, x0, y0, x1, y1, columns, hashes, flat)\n\n"
             "Hash every row (or, with columns, every column) of the area [x0, x1) x [y0, y1) of\n"
             "src (uint8, (H, W, 3|4)) into hashes (uint64, one per line); flat (bool) tells\n"
             "which lines are one colour. Equal lines of (r, g, b) have equal hashes.");

/* ---- matches ------------------------------------------------------------------------------- */

static int get_index(PyObject *obj, Py_buffer *view, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0) return -1;
    if (view->ndim != 1 || view->itemsize != sizeof(Py_ssize_t) || view->strides[0] % 8 != 0 ||
        !view->format || (view->format[0] != 'l' && view->format[0] != 'q' && view->format[0] != 'n')) {
        PyErr_Format(PyExc_ValueError, "%s must be a 1-D array of intp", name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

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
    if (get_index(ys_obj, &vy, "ys") < 0) goto fail_t;
    if (get_index(xs_obj, &vx, "xs") < 0) goto fail_y;
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
        const Py_ssize_t y = *(const Py_ssize_t *)(ys + i * vy.strides[0]);
        const Py_ssize_t x = *(const Py_ssize_t *)(xs + i * vx.strides[0]);
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

/* ---- scores -------------------------------------------------------------------------------- */

static inline int near3(const uint8_t *p, const uint8_t *q) {
    return abs(p[0] - q[0]) <= 3 && abs(p[1] - q[1]) <= 3 && abs(p[2] - q[2]) <= 3;
}

/* Many translations scored in one call: the move search ranks hundreds of them on a sample of
 * a region's pixels, and one call each cost more in Python than the counting itself. */
PyObject *vfa_scores(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *ys_obj, *xs_obj, *dxs_obj, *dys_obj, *arrived_obj, *left_obj;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &a_obj, &b_obj, &ys_obj, &xs_obj, &dxs_obj, &dys_obj,
                          &arrived_obj, &left_obj))
        return NULL;
    Py_buffer va, vb, vy, vx, vdx, vdy, var, vle;
    pixels_t a, b;
    PyObject *result = NULL;
    if (vfa_get_pixels(a_obj, &va, &a, "a") < 0) return NULL;
    if (vfa_get_pixels(b_obj, &vb, &b, "b") < 0) goto fail_a;
    if (get_index(ys_obj, &vy, "ys") < 0) goto fail_b;
    if (get_index(xs_obj, &vx, "xs") < 0) goto fail_y;
    if (get_index(dxs_obj, &vdx, "dxs") < 0) goto fail_x;
    if (get_index(dys_obj, &vdy, "dys") < 0) goto fail_dx;
    if (get_index(arrived_obj, &var, "arrived") < 0) goto fail_dy;
    if (get_index(left_obj, &vle, "left") < 0) goto fail_ar;
    const Py_ssize_t n = vy.shape[0], k = vdx.shape[0], w = vb.shape[1], h = vb.shape[0];
    if (vx.shape[0] != n || vdy.shape[0] != k || var.shape[0] != k || vle.shape[0] != k ||
        var.readonly || vle.readonly) {
        PyErr_SetString(PyExc_ValueError,
                        "ys and xs must have one length; dxs, dys and the writable counts another");
        goto done;
    }
    if (va.shape[0] != h || va.shape[1] != w) {
        PyErr_SetString(PyExc_ValueError, "a and b must have one size");
        goto done;
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        const Py_ssize_t y = *(const Py_ssize_t *)((const char *)vy.buf + i * vy.strides[0]);
        const Py_ssize_t x = *(const Py_ssize_t *)((const char *)vx.buf + i * vx.strides[0]);
        bad = y < 0 || y >= h || x < 0 || x >= w;
    }
    for (Py_ssize_t j = 0; j < k && !bad; j++) {
        const Py_ssize_t dx = *(const Py_ssize_t *)((const char *)vdx.buf + j * vdx.strides[0]);
        const Py_ssize_t dy = *(const Py_ssize_t *)((const char *)vdy.buf + j * vdy.strides[0]);
        Py_ssize_t arrived = 0, left = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            const Py_ssize_t y = *(const Py_ssize_t *)((const char *)vy.buf + i * vy.strides[0]);
            const Py_ssize_t x = *(const Py_ssize_t *)((const char *)vx.buf + i * vx.strides[0]);
            const uint8_t *pa = a.data + y * a.stride + x * a.channels;
            const uint8_t *pb = b.data + y * b.stride + x * b.channels;
            /* Arrived: the candidate here shows what the base had at p - d. */
            const Py_ssize_t fy = y - dy, fx = x - dx;
            if (fy >= 0 && fy < h && fx >= 0 && fx < w)
                arrived += near3(pb, a.data + fy * a.stride + fx * a.channels);
            /* Left: the base's content here shows in the candidate at p + d. */
            const Py_ssize_t ty = y + dy, tx = x + dx;
            if (ty >= 0 && ty < h && tx >= 0 && tx < w)
                left += near3(pa, b.data + ty * b.stride + tx * b.channels);
        }
        *(Py_ssize_t *)((char *)var.buf + j * var.strides[0]) = arrived;
        *(Py_ssize_t *)((char *)vle.buf + j * vle.strides[0]) = left;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "a pixel of ys, xs lies outside the image");
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&vle);
fail_ar:
    PyBuffer_Release(&var);
fail_dy:
    PyBuffer_Release(&vdy);
fail_dx:
    PyBuffer_Release(&vdx);
fail_x:
    PyBuffer_Release(&vx);
fail_y:
    PyBuffer_Release(&vy);
fail_b:
    PyBuffer_Release(&vb);
fail_a:
    PyBuffer_Release(&va);
    return result;
}

VFA_DOC(vfa_scores_doc,
        "scores(a, b, ys, xs, dxs, dys, arrived, left)\n\n"
        "For each translation (dxs[j], dys[j]), count the pixels (ys[i], xs[i]) where b shows\n"
        "a's colour from (x - dx, y - dy) (into arrived[j]) and where a's colour shows in b at\n"
        "(x + dx, y + dy) (into left[j]), within 3 levels per channel as matches() counts.");
