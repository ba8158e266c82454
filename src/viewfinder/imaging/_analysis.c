/*
 * Inner loops of the change analysis (analysis.py holds the method and its reasons).
 *
 * blur() smooths an area of an image, motion_residual() estimates the sub-pixel motion of a
 * window of two blurred images (one Lucas-Kanade step) and measures what the motion leaves
 * unexplained inside a box, envelope() checks that changed pixels stay within their
 * neighbours' range of colours, signatures() hashes the rows or columns of an area so that
 * moved lines can be found by their hash, matches() checks a translation pixel by pixel. All
 * release the GIL.
 *
 * This module is built apart from _native so that its sums may be reassociated (and so
 * vectorised): nothing here has to reproduce another program's rounding.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_buffers.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *data;
    Py_ssize_t stride;
    int channels;
} pixels_t;

typedef struct {
    float *data;
    Py_ssize_t stride; /* floats from one row to the next */
    Py_ssize_t width, height;
} plane3_t; /* rows of (r, g, b) float triples */

static int get_pixels(PyObject *obj, Py_buffer *view, pixels_t *im, const char *name) {
    if (get_uint8_image(obj, view, name) < 0) return -1;
    im->data = view->buf;
    im->stride = view->strides[0];
    im->channels = (int)view->shape[2];
    return 0;
}

static int get_plane3(PyObject *obj, Py_buffer *view, int writable, plane3_t *p, const char *name) {
    int flags = PyBUF_STRIDED_RO | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    if (view->ndim != 3 || view->itemsize != 4 || !view->format || view->format[0] != 'f' ||
        view->shape[2] != 3 || view->strides[2] != 4 || view->strides[1] != 12 ||
        view->strides[0] < 0 || view->strides[0] % 4 != 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be a float32 array of shape (height, width, 3) with contiguous rows",
                     name);
        PyBuffer_Release(view);
        return -1;
    }
    p->data = view->buf;
    p->stride = view->strides[0] / 4;
    p->height = view->shape[0];
    p->width = view->shape[1];
    return 0;
}

static inline Py_ssize_t clamp(Py_ssize_t v, Py_ssize_t lo, Py_ssize_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

/* ---- blur ---------------------------------------------------------------------------------- */

/* The [1 2 3 2 1] / 9 kernel along rows then columns (a 3x3 box applied twice), edges of the
 * area repeated. Sums are exact integers (at most 81 * 255, so 16 bits hold them); only the
 * final scale rounds. Both passes run over a row's bytes as one flat run, alpha included, so
 * that they vectorise; each source row is blurred along x once, into a ring of five. */
typedef struct {
    uint8_t *padded;  /* one source row, its first and last pixel repeated twice */
    uint16_t *ring;   /* five rows blurred along x */
    uint16_t *column; /* one row blurred along both axes */
} blur_buffers_t;

static void blur_row_x(const uint8_t *row, Py_ssize_t w, int c, uint8_t *padded, uint16_t *to) {
    const Py_ssize_t n = w * c;
    memcpy(padded + 2 * c, row, (size_t)n);
    for (int ch = 0; ch < c; ch++) {
        padded[ch] = padded[c + ch] = row[ch];
        padded[n + 2 * c + ch] = padded[n + 3 * c + ch] = row[n - c + ch];
    }
    const uint8_t *p = padded + 2 * c;
    for (Py_ssize_t i = 0; i < n; i++)
        to[i] = (uint16_t)(p[i - 2 * c] + 2 * p[i - c] + 3 * p[i] + 2 * p[i + c] + p[i + 2 * c]);
}

static void blur_area(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t w,
                      Py_ssize_t h, const plane3_t *out, const blur_buffers_t *buf) {
    const int c = src->channels;
    const Py_ssize_t n = w * c;
    const float scale = 1.0f / 81.0f;
    Py_ssize_t ready = 0; /* source rows [0, ready) of the area are in the ring */
    for (Py_ssize_t r = 0; r < h; r++) {
        for (; ready < h && ready <= r + 2; ready++)
            blur_row_x(src->data + (y0 + ready) * src->stride + x0 * c, w, c, buf->padded,
                       buf->ring + (ready % 5) * n);
        const uint16_t *v[5];
        for (int i = 0; i < 5; i++) v[i] = buf->ring + (clamp(r + i - 2, 0, h - 1) % 5) * n;
        uint16_t *col = buf->column;
        for (Py_ssize_t i = 0; i < n; i++)
            col[i] = (uint16_t)(v[0][i] + 2 * v[1][i] + 3 * v[2][i] + 2 * v[3][i] + v[4][i]);
        float *o = out->data + r * out->stride;
        if (c == 3) {
            for (Py_ssize_t i = 0; i < n; i++) o[i] = (float)col[i] * scale;
        } else {
            for (Py_ssize_t x = 0; x < w; x++)
                for (int ch = 0; ch < 3; ch++) o[x * 3 + ch] = (float)col[x * c + ch] * scale;
        }
    }
}

static PyObject *blur(PyObject *self, PyObject *args) {
    PyObject *src_obj, *out_obj;
    Py_ssize_t x0, y0;
    if (!PyArg_ParseTuple(args, "OnnO", &src_obj, &x0, &y0, &out_obj)) return NULL;
    Py_buffer vs, vo;
    pixels_t src;
    plane3_t out;
    if (get_pixels(src_obj, &vs, &src, "src") < 0) return NULL;
    if (get_plane3(out_obj, &vo, 1, &out, "out") < 0) {
        PyBuffer_Release(&vs);
        return NULL;
    }
    PyObject *result = NULL;
    if (x0 < 0 || y0 < 0 || x0 + out.width > vs.shape[1] || y0 + out.height > vs.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "the area lies outside the image");
        goto done;
    }
    if (out.width == 0 || out.height == 0) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    const size_t n = (size_t)(out.width * src.channels);
    blur_buffers_t buf = {
        .padded = malloc(n + 4 * (size_t)src.channels),
        .ring = malloc(sizeof(uint16_t) * 5 * n),
        .column = malloc(sizeof(uint16_t) * n),
    };
    if (buf.padded && buf.ring && buf.column) {
        Py_BEGIN_ALLOW_THREADS
        blur_area(&src, x0, y0, out.width, out.height, &out, &buf);
        Py_END_ALLOW_THREADS
    }
    int ok = buf.padded && buf.ring && buf.column;
    free(buf.padded);
    free(buf.ring);
    free(buf.column);
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&vs);
    PyBuffer_Release(&vo);
    return result;
}

PyDoc_STRVAR(blur_doc,
             "blur(src, x0, y0, out)\n\n"
             "Write into out (float32, (h, w, 3)) the area of src (uint8, (H, W, 3|4)) at (x0, y0)\n"
             "blurred by [1 2 3 2 1] / 9 along both axes, the area's edges repeated.");

/* ---- motion residual ------------------------------------------------------------------------ */

typedef struct {
    Py_ssize_t x0, y0, x1, y1;
} box_t;

/* One Lucas-Kanade step over the whole window: the translation (tx, ty), clipped to a pixel,
 * that best explains b - a from a's gradient. Gradients are central differences inside and
 * one-sided at the window's edges. */
static void estimate_motion(const plane3_t *a, const plane3_t *b, double *tx, double *ty) {
    const Py_ssize_t w = a->width, h = a->height;
    double sxx = 0, sxy = 0, syy = 0, sxd = 0, syd = 0;
    for (Py_ssize_t y = 0; y < h; y++) {
        const float *row = a->data + y * a->stride;
        const float *up = a->data + (y > 0 ? y - 1 : 0) * a->stride;
        const float *down = a->data + (y < h - 1 ? y + 1 : h - 1) * a->stride;
        const float gscale = (y > 0 && y < h - 1) ? 0.5f : 1.0f;
        const float *brow = b->data + y * b->stride;
        float rxx = 0, rxy = 0, ryy = 0, rxd = 0, ryd = 0;
#define ACCUMULATE(i, gx)                                 \
    do {                                                  \
        const float gx_ = (gx);                           \
        const float gy_ = (down[i] - up[i]) * gscale;     \
        const float d_ = brow[i] - row[i];                \
        rxx += gx_ * gx_;                                 \
        rxy += gx_ * gy_;                                 \
        ryy += gy_ * gy_;                                 \
        rxd += gx_ * d_;                                  \
        ryd += gy_ * d_;                                  \
    } while (0)
        for (Py_ssize_t i = 0; i < 3; i++) ACCUMULATE(i, row[i + 3] - row[i]);
        for (Py_ssize_t i = 3; i < (w - 1) * 3; i++) ACCUMULATE(i, (row[i + 3] - row[i - 3]) * 0.5f);
        for (Py_ssize_t i = (w - 1) * 3; i < w * 3; i++) ACCUMULATE(i, row[i] - row[i - 3]);
#undef ACCUMULATE
        sxx += rxx;
        sxy += rxy;
        syy += ryy;
        sxd += rxd;
        syd += ryd;
    }
    const double ridge = 1e-3 + 1e-4 * (sxx + syy); /* flat windows: no motion, not a wild one */
    const double m00 = sxx + ridge, m11 = syy + ridge, m01 = sxy;
    const double det = m00 * m11 - m01 * m01;
    double vx = -sxd, vy = -syd;
    double sx = det != 0 ? (m11 * vx - m01 * vy) / det : 0;
    double sy = det != 0 ? (m00 * vy - m01 * vx) / det : 0;
    *tx = sx < -1 ? -1 : (sx > 1 ? 1 : sx);
    *ty = sy < -1 ? -1 : (sy > 1 ? 1 : sy);
}

/* Largest |b - a sampled at (x - tx, y - ty)| over the box and the three channels, bilinear
 * sampling with the window's edges repeated. */
static float residual_in(const plane3_t *a, const plane3_t *b, double tx, double ty, box_t box) {
    const Py_ssize_t w = a->width, h = a->height;
    const Py_ssize_t kx = (Py_ssize_t)floor(-tx), ky = (Py_ssize_t)floor(-ty);
    const float fx = (float)(-tx - (double)kx), fy = (float)(-ty - (double)ky);
    float worst = 0;
    for (Py_ssize_t y = box.y0; y < box.y1; y++) {
        const float *r0 = a->data + clamp(y + ky, 0, h - 1) * a->stride;
        const float *r1 = a->data + clamp(y + ky + 1, 0, h - 1) * a->stride;
        const float *brow = b->data + y * b->stride;
        for (Py_ssize_t x = box.x0; x < box.x1; x++) {
            const Py_ssize_t c0 = clamp(x + kx, 0, w - 1) * 3, c1 = clamp(x + kx + 1, 0, w - 1) * 3;
            for (int ch = 0; ch < 3; ch++) {
                const float top = r0[c0 + ch] * (1 - fx) + r0[c1 + ch] * fx;
                const float bottom = r1[c0 + ch] * (1 - fx) + r1[c1 + ch] * fx;
                const float diff = fabsf(brow[x * 3 + ch] - (top * (1 - fy) + bottom * fy));
                if (diff > worst) worst = diff;
            }
        }
    }
    return worst;
}

static int parse_box(PyObject *obj, box_t *box, Py_ssize_t w, Py_ssize_t h, const char *name,
                     const char *within) {
    if (!PyArg_ParseTuple(obj, "nnnn", &box->x0, &box->y0, &box->x1, &box->y1)) return -1;
    if (box->x1 < box->x0) box->x1 = box->x0;
    if (box->y1 < box->y0) box->y1 = box->y0;
    if (box->x0 < 0 || box->y0 < 0 || box->x1 > w || box->y1 > h) {
        PyErr_Format(PyExc_ValueError, "%s lies outside the %s", name, within);
        return -1;
    }
    return 0;
}

/* Both images' window blurred (from 2 px around it where the image has them, so that the
 * blur sees the window's true neighbours), the motion estimated over the window, and the
 * residual measured. Scratch memory is the window's size: it stays in cache, and no
 * page-sized plane is ever allocated for a handful of small regions. */
static int window_residual(const pixels_t *a, const pixels_t *b, Py_ssize_t iw, Py_ssize_t ih,
                           box_t win, box_t inside, box_t trimmed, double still, float *worst,
                           double *motion) {
    const Py_ssize_t ex0 = win.x0 >= 2 ? win.x0 - 2 : 0, ey0 = win.y0 >= 2 ? win.y0 - 2 : 0;
    const Py_ssize_t ex1 = win.x1 + 2 <= iw ? win.x1 + 2 : iw;
    const Py_ssize_t ey1 = win.y1 + 2 <= ih ? win.y1 + 2 : ih;
    const Py_ssize_t ew = ex1 - ex0, eh = ey1 - ey0, w = win.x1 - win.x0, h = win.y1 - win.y0;
    const size_t n = (size_t)(ew * a->channels);
    float *planes = malloc(sizeof(float) * 6 * (size_t)(ew * eh));
    blur_buffers_t buf = {
        .padded = malloc(n + 4 * (size_t)a->channels),
        .ring = malloc(sizeof(uint16_t) * 5 * n),
        .column = malloc(sizeof(uint16_t) * n),
    };
    const int ok = planes && buf.padded && buf.ring && buf.column;
    if (ok) {
        const plane3_t area_a = {planes, ew * 3, ew, eh};
        const plane3_t area_b = {planes + 3 * ew * eh, ew * 3, ew, eh};
        blur_area(a, ex0, ey0, ew, eh, &area_a, &buf);
        blur_area(b, ex0, ey0, ew, eh, &area_b, &buf);
        const Py_ssize_t skip = (win.y0 - ey0) * ew * 3 + (win.x0 - ex0) * 3;
        const plane3_t wa = {area_a.data + skip, ew * 3, w, h};
        const plane3_t wb = {area_b.data + skip, ew * 3, w, h};
        double tx = 0, ty = 0;
        *motion = 0;
        if (w >= 2 && h >= 2) {
            estimate_motion(&wa, &wb, &tx, &ty);
            *motion = hypot(tx, ty);
        }
        *worst = residual_in(&wa, &wb, tx, ty, *motion >= still ? trimmed : inside);
    }
    free(planes);
    free(buf.padded);
    free(buf.ring);
    free(buf.column);
    return ok;
}

static PyObject *motion_residual(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *win_obj, *inside_obj, *trimmed_obj;
    double still;
    if (!PyArg_ParseTuple(args, "OOO!O!O!d", &a_obj, &b_obj, &PyTuple_Type, &win_obj,
                          &PyTuple_Type, &inside_obj, &PyTuple_Type, &trimmed_obj, &still))
        return NULL;
    Py_buffer va, vb;
    pixels_t a, b;
    if (get_pixels(a_obj, &va, &a, "a") < 0) return NULL;
    if (get_pixels(b_obj, &vb, &b, "b") < 0) {
        PyBuffer_Release(&va);
        return NULL;
    }
    PyObject *result = NULL;
    box_t win, inside, trimmed;
    if (va.shape[0] != vb.shape[0] || va.shape[1] != vb.shape[1] || a.channels != b.channels) {
        PyErr_SetString(PyExc_ValueError, "a and b must have the same shape");
        goto done;
    }
    if (parse_box(win_obj, &win, va.shape[1], va.shape[0], "window", "image") < 0) goto done;
    if (win.x1 == win.x0 || win.y1 == win.y0) {
        result = Py_BuildValue("dd", 0.0, 0.0);
        goto done;
    }
    if (parse_box(inside_obj, &inside, win.x1 - win.x0, win.y1 - win.y0, "inside", "window") < 0 ||
        parse_box(trimmed_obj, &trimmed, win.x1 - win.x0, win.y1 - win.y0, "trimmed", "window") < 0)
        goto done;
    float worst = 0;
    double motion = 0;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = window_residual(&a, &b, va.shape[1], va.shape[0], win, inside, trimmed, still, &worst,
                         &motion);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("dd", (double)worst, motion);
done:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

PyDoc_STRVAR(motion_residual_doc,
             "motion_residual(a, b, window, inside, trimmed, still) -> (residual, motion)\n\n"
             "a, b: images of one shape (uint8, (H, W, 3|4)). Blurs both over `window`\n"
             "(x0, y0, x1, y1) like blur(), estimates the sub-pixel translation of b against a\n"
             "over the window, and returns the largest per-channel difference left inside\n"
             "`inside` (window-relative), or inside `trimmed` when the motion is `still` px or\n"
             "more, with the motion's length in px.");

/* ---- envelope ------------------------------------------------------------------------------ */

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

static PyObject *envelope(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj;
    Py_ssize_t bx, by;
    int skip_edges;
    if (!PyArg_ParseTuple(args, "OOOnnp", &a_obj, &b_obj, &mask_obj, &bx, &by, &skip_edges))
        return NULL;
    Py_buffer va, vb, vm;
    pixels_t a, b;
    PyObject *result = NULL;
    if (get_pixels(a_obj, &va, &a, "a") < 0) return NULL;
    if (get_pixels(b_obj, &vb, &b, "b") < 0) goto fail_a;
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

PyDoc_STRVAR(envelope_doc,
             "envelope(a, b, mask, x, y, skip_edges) -> bool\n\n"
             "Whether every pixel set in mask (placed at (x, y)) has, in one image or the other,\n"
             "a colour within 2 levels of the range of the other image's 3x3 neighbourhood;\n"
             "skip_edges leaves out pixels within 2 px of the image's border.");

/* ---- signatures ---------------------------------------------------------------------------- */

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

static PyObject *signatures(PyObject *self, PyObject *args) {
    PyObject *src_obj, *hash_obj, *flat_obj;
    Py_ssize_t x0, y0, x1, y1;
    int columns;
    if (!PyArg_ParseTuple(args, "OnnnnpOO", &src_obj, &x0, &y0, &x1, &y1, &columns, &hash_obj,
                          &flat_obj))
        return NULL;
    Py_buffer vs, vh, vf;
    pixels_t src;
    if (get_pixels(src_obj, &vs, &src, "src") < 0) return NULL;
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
        for (Py_ssize_t y = y0; y < y1; y++) {
            const uint8_t *row = src.data + y * src.stride + x0 * c;
            const uint64_t first = rgb(row);
            uint64_t h = 0;
            int same = 1;
            for (Py_ssize_t x = 0; x < x1 - x0; x++) {
                const uint64_t v = rgb(row + x * c);
                h = h * SIG_MUL + v + 1;
                same &= v == first;
            }
            hash[y - y0] = mix64(h);
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

PyDoc_STRVAR(signatures_doc,
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

static PyObject *matches(PyObject *self, PyObject *args) {
    PyObject *here_obj, *there_obj, *ys_obj, *xs_obj, *ok_obj;
    Py_ssize_t dx, dy;
    long ref;
    if (!PyArg_ParseTuple(args, "OOOOnnOl", &here_obj, &there_obj, &ys_obj, &xs_obj, &dx, &dy,
                          &ok_obj, &ref))
        return NULL;
    Py_buffer vh, vt, vy, vx, vo;
    pixels_t here, there;
    PyObject *result = NULL;
    if (get_pixels(here_obj, &vh, &here, "here") < 0) return NULL;
    if (get_pixels(there_obj, &vt, &there, "there") < 0) goto fail_h;
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

PyDoc_STRVAR(matches_doc,
             "matches(here, there, ys, xs, dx, dy, ok, ref) -> (matched, same, ref)\n\n"
             "For each pixel (ys[i], xs[i]) of here, set ok[i] when there at (x + dx, y + dy) has\n"
             "its colour within 3 levels per channel. Counts the matches, and those whose colour\n"
             "is exactly ref (0xBBGGRR; -1 takes the first match's colour, which is returned).");

static PyMethodDef methods[] = {
    {"blur", blur, METH_VARARGS, blur_doc},
    {"motion_residual", motion_residual, METH_VARARGS, motion_residual_doc},
    {"envelope", envelope, METH_VARARGS, envelope_doc},
    {"signatures", signatures, METH_VARARGS, signatures_doc},
    {"matches", matches, METH_VARARGS, matches_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_analysis", "Inner loops of the change analysis.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__analysis(void) { return PyModule_Create(&module); }
