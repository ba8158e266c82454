/*
 * The noise test's motion residual: blur() and motion_residual(). Both images are blurred over
 * a window, one Lucas-Kanade step estimates their sub-pixel motion, and what the motion leaves
 * unexplained inside a box is measured.
 */
#include "_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* ---- blur ---------------------------------------------------------------------------------- */

/* The [1 2 3 2 1] / 9 kernel along rows then columns (a 3x3 box applied twice), edges of the
 * area repeated. Sums are exact integers (at most 81 * 255, so 16 bits hold them); only the
 * final scale rounds. Both passes run over a row's bytes as one flat run, alpha included, so
 * that they vectorise; each source row is blurred along x once, into a ring of five (rows of
 * (r, g, b) in place, with no padded copy), and the pass along y writes the floats. */
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

/* blur_row_x for (r, g, b) rows, read in place: only the two pixels at each end need their
 * neighbours repeated, and their sums are written out with the repeats folded in (a clamped
 * loop over them cost as much as the rest of a narrow row). */
VF_CLONES
static void blur_row_x3(const uint8_t *restrict row, Py_ssize_t w, uint16_t *restrict to) {
    if (w < 5) {
        static const int taps[5] = {1, 2, 3, 2, 1};
        for (Py_ssize_t x = 0; x < w; x++)
            for (int ch = 0; ch < 3; ch++) {
                int sum = 0;
                for (int t = -2; t <= 2; t++)
                    sum += taps[t + 2] * row[clamp(x + t, 0, w - 1) * 3 + ch];
                to[x * 3 + ch] = (uint16_t)sum;
            }
        return;
    }
    const uint8_t *end = row + (w - 1) * 3;
    uint16_t *last = to + (w - 1) * 3;
    for (int ch = 0; ch < 3; ch++) {
        to[ch] = (uint16_t)(6 * row[ch] + 2 * row[3 + ch] + row[6 + ch]);
        to[3 + ch] = (uint16_t)(3 * row[ch] + 3 * row[3 + ch] + 2 * row[6 + ch] + row[9 + ch]);
        last[ch - 3] =
            (uint16_t)(end[ch - 9] + 2 * end[ch - 6] + 3 * end[ch - 3] + 3 * end[ch]);
        last[ch] = (uint16_t)(end[ch - 6] + 2 * end[ch - 3] + 6 * end[ch]);
    }
    for (Py_ssize_t i = 6; i < w * 3 - 6; i++)
        to[i] = (uint16_t)(row[i - 6] + 2 * row[i - 3] + 3 * row[i] + 2 * row[i + 3] + row[i + 6]);
}

/* An area's rows blurred one at a time, top to bottom: the ring holds the rows blurred along x
 * that the next row along y needs. */
typedef struct {
    const pixels_t *src;
    Py_ssize_t x0, y0, w, h;
    const blur_buffers_t *buf;
    Py_ssize_t ready, next; /* source rows [0, ready) are in the ring; `next` is output next */
} rows_t;

static rows_t blur_rows(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t w,
                        Py_ssize_t h, const blur_buffers_t *buf) {
    return (rows_t){src, x0, y0, w, h, buf, 0, 0};
}

/* The next row of the area, blurred, into o (w (r, g, b) floats). */
VF_CLONES
static void blur_next(rows_t *rows, float *restrict o) {
    const int c = rows->src->channels;
    const Py_ssize_t w = rows->w, h = rows->h, n = w * c, r = rows->next++;
    const blur_buffers_t *buf = rows->buf;
    const float scale = 1.0f / 81.0f;
    /* After rows skipped (blur_area_where), only this row's neighbours are blurred along x. */
    if (rows->ready < r - 2) rows->ready = r - 2;
    for (; rows->ready < h && rows->ready <= r + 2; rows->ready++) {
        const uint8_t *row =
            rows->src->data + (rows->y0 + rows->ready) * rows->src->stride + rows->x0 * c;
        uint16_t *to = buf->ring + (rows->ready % 5) * n;
        fetch_ahead(row, rows->src->stride, (size_t)n, rows->ready + 2 < h);
        if (c == 3) blur_row_x3(row, w, to);
        else blur_row_x(row, w, c, buf->padded, to);
    }
    const uint16_t *restrict v0 = buf->ring + (clamp(r - 2, 0, h - 1) % 5) * n;
    const uint16_t *restrict v1 = buf->ring + (clamp(r - 1, 0, h - 1) % 5) * n;
    const uint16_t *restrict v2 = buf->ring + (r % 5) * n;
    const uint16_t *restrict v3 = buf->ring + (clamp(r + 1, 0, h - 1) % 5) * n;
    const uint16_t *restrict v4 = buf->ring + (clamp(r + 2, 0, h - 1) % 5) * n;
    if (c == 3) {
        for (Py_ssize_t i = 0; i < n; i++)
            o[i] = (float)(uint16_t)(v0[i] + 2 * v1[i] + 3 * v2[i] + 2 * v3[i] + v4[i]) * scale;
    } else {
        uint16_t *restrict col = buf->column;
        for (Py_ssize_t i = 0; i < n; i++)
            col[i] = (uint16_t)(v0[i] + 2 * v1[i] + 3 * v2[i] + 2 * v3[i] + v4[i]);
        for (Py_ssize_t x = 0; x < w; x++)
            for (int ch = 0; ch < 3; ch++) o[x * 3 + ch] = (float)col[x * c + ch] * scale;
    }
}

static void blur_area(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t w,
                      Py_ssize_t h, const plane3_t *out, const blur_buffers_t *buf) {
    rows_t rows = blur_rows(src, x0, y0, w, h, buf);
    for (Py_ssize_t r = 0; r < h; r++) blur_next(&rows, out->data + r * out->stride);
}

/* blur_area for the rows `need` marks (a byte a row of the area); the others are not written. */
static void blur_area_where(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t w,
                            Py_ssize_t h, const plane3_t *out, const blur_buffers_t *buf,
                            const uint8_t *need) {
    rows_t rows = blur_rows(src, x0, y0, w, h, buf);
    for (Py_ssize_t r = 0; r < h; r++) {
        if (need[r]) blur_next(&rows, out->data + r * out->stride);
        else rows.next++;
    }
}

PyObject *vfa_blur(PyObject *self, PyObject *args) {
    PyObject *src_obj, *out_obj;
    Py_ssize_t x0, y0;
    if (!PyArg_ParseTuple(args, "OnnO", &src_obj, &x0, &y0, &out_obj)) return NULL;
    Py_buffer vs, vo;
    pixels_t src;
    plane3_t out;
    if (vfa_get_pixels(src_obj, &vs, &src, "src") < 0) return NULL;
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

VFA_DOC(vfa_blur_doc,
        "blur(src, x0, y0, out)\n\n"
        "Write into out (float32, (h, w, 3)) the area of src (uint8, (H, W, 3|4)) at (x0, y0)\n"
        "blurred by [1 2 3 2 1] / 9 along both axes, the area's edges repeated.");

/* ---- motion residual ------------------------------------------------------------------------ */

typedef struct {
    Py_ssize_t x0, y0, x1, y1;
} box_t;

/* One row's terms of the Lucas-Kanade sums, added to sums[] (xx, xy, yy, xd, yd): a's row with
 * the rows above and below it (the row itself at the window's edges, gscale 1), b's row. Not
 * inlined: the window in memory and the window in strips must add exactly the same floats. */
VF_CLONES __attribute__((noinline)) static void accumulate_row(const float *up, const float *row,
                                                      const float *down, const float *brow,
                                                      Py_ssize_t w, float gscale, double *sums) {
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
    sums[0] += rxx;
    sums[1] += rxy;
    sums[2] += ryy;
    sums[3] += rxd;
    sums[4] += ryd;
}

/* The translation (tx, ty), clipped to a pixel, that the sums say best explains b - a. */
static void solve_motion(const double *sums, double *tx, double *ty) {
    const double sxx = sums[0], sxy = sums[1], syy = sums[2], sxd = sums[3], syd = sums[4];
    const double ridge = 1e-3 + 1e-4 * (sxx + syy); /* flat windows: no motion, not a wild one */
    const double m00 = sxx + ridge, m11 = syy + ridge, m01 = sxy;
    const double det = m00 * m11 - m01 * m01;
    double vx = -sxd, vy = -syd;
    double sx = det != 0 ? (m11 * vx - m01 * vy) / det : 0;
    double sy = det != 0 ? (m00 * vy - m01 * vx) / det : 0;
    *tx = sx < -1 ? -1 : (sx > 1 ? 1 : sx);
    *ty = sy < -1 ? -1 : (sy > 1 ? 1 : sy);
}

/* One Lucas-Kanade step over the whole window: the translation (tx, ty), clipped to a pixel,
 * that best explains b - a from a's gradient. Gradients are central differences inside and
 * one-sided at the window's edges. */
static void estimate_motion(const plane3_t *a, const plane3_t *b, const uint8_t *flat,
                            double *tx, double *ty) {
    const Py_ssize_t w = a->width, h = a->height;
    double sums[5] = {0, 0, 0, 0, 0};
    for (Py_ssize_t y = 0; y < h; y++) {
        if (flat[y]) continue; /* its terms are all 0 */
        const float *row = a->data + y * a->stride;
        const float *up = a->data + (y > 0 ? y - 1 : 0) * a->stride;
        const float *down = a->data + (y < h - 1 ? y + 1 : h - 1) * a->stride;
        const float gscale = (y > 0 && y < h - 1) ? 0.5f : 1.0f;
        accumulate_row(up, row, down, b->data + y * b->stride, w, gscale, sums);
    }
    solve_motion(sums, tx, ty);
}

/* Bilinear sampling of a at (x - tx, y - ty): whole and fractional parts, and the columns
 * [fast0, fast1) whose two samples lie inside a window w wide (the rest clamp to its edges). */
typedef struct {
    Py_ssize_t kx, ky, fast0, fast1;
    float fx, fy, gx, gy;
} sampling_t;

static sampling_t sampling_for(double tx, double ty, Py_ssize_t w, box_t box) {
    sampling_t s;
    s.kx = (Py_ssize_t)floor(-tx);
    s.ky = (Py_ssize_t)floor(-ty);
    s.fx = (float)(-tx - (double)s.kx);
    s.fy = (float)(-ty - (double)s.ky);
    s.gx = 1 - s.fx;
    s.gy = 1 - s.fy;
    s.fast0 = box.x0 > -s.kx ? box.x0 : -s.kx;
    s.fast1 = box.x1 < w - 1 - s.kx ? box.x1 : w - 1 - s.kx;
    if (s.fast1 < s.fast0) s.fast0 = s.fast1 = box.x1;
    return s;
}

/* Largest |b - a sampled| along one row of the box (r0, r1: a's rows y + ky and y + ky + 1,
 * clamped to the window; brow: b's row y), over the three channels. Not inlined, for the same
 * reason as accumulate_row. */
__attribute__((noinline)) static float residual_row(const float *r0, const float *r1,
                                                    const float *brow, Py_ssize_t w, box_t box,
                                                    const sampling_t *s) {
    const Py_ssize_t kx = s->kx, fast0 = s->fast0, fast1 = s->fast1;
    const float fx = s->fx, fy = s->fy, gx = s->gx, gy = s->gy;
    float worst = 0;
    for (Py_ssize_t x = box.x0; x < box.x1; x++) {
        if (x == fast0) x = fast1;
        if (x >= box.x1) break;
        const Py_ssize_t c0 = clamp(x + kx, 0, w - 1) * 3, c1 = clamp(x + kx + 1, 0, w - 1) * 3;
        for (int ch = 0; ch < 3; ch++) {
            const float top = r0[c0 + ch] * gx + r0[c1 + ch] * fx;
            const float bottom = r1[c0 + ch] * gx + r1[c1 + ch] * fx;
            const float diff = fabsf(brow[x * 3 + ch] - (top * gy + bottom * fy));
            worst = diff > worst ? diff : worst;
        }
    }
    const float *p0 = r0 + kx * 3, *p1 = r1 + kx * 3;
    Py_ssize_t i = fast0 * 3;
#ifdef __SSE2__
    /* Four at a time: the compiler will not vectorise a float max it must keep NaN-exact. */
    const __m128 vgx = _mm_set1_ps(gx), vfx = _mm_set1_ps(fx), vgy = _mm_set1_ps(gy),
                 vfy = _mm_set1_ps(fy), sign = _mm_set1_ps(-0.0f);
    __m128 most = _mm_setzero_ps();
    for (; i + 4 <= fast1 * 3; i += 4) {
        const __m128 top = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(p0 + i), vgx),
                                      _mm_mul_ps(_mm_loadu_ps(p0 + i + 3), vfx));
        const __m128 bottom = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(p1 + i), vgx),
                                         _mm_mul_ps(_mm_loadu_ps(p1 + i + 3), vfx));
        const __m128 sampled = _mm_add_ps(_mm_mul_ps(top, vgy), _mm_mul_ps(bottom, vfy));
        most = _mm_max_ps(most, _mm_andnot_ps(sign, _mm_sub_ps(_mm_loadu_ps(brow + i), sampled)));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, most);
    for (int k = 0; k < 4; k++) worst = lanes[k] > worst ? lanes[k] : worst;
#endif
    for (; i < fast1 * 3; i++) {
        const float top = p0[i] * gx + p0[i + 3] * fx;
        const float bottom = p1[i] * gx + p1[i + 3] * fx;
        const float diff = fabsf(brow[i] - (top * gy + bottom * fy));
        worst = diff > worst ? diff : worst;
    }
    return worst;
}

/* Largest |b - a sampled at (x - tx, y - ty)| over the box and the three channels, bilinear
 * sampling with the window's edges repeated. */
static float residual_in(const plane3_t *a, const plane3_t *b, double tx, double ty, box_t box) {
    const Py_ssize_t h = a->height;
    const sampling_t s = sampling_for(tx, ty, a->width, box);
    float worst = 0;
    for (Py_ssize_t y = box.y0; y < box.y1; y++) {
        const float *r0 = a->data + clamp(y + s.ky, 0, h - 1) * a->stride;
        const float *r1 = a->data + clamp(y + s.ky + 1, 0, h - 1) * a->stride;
        const float row = residual_row(r0, r1, b->data + y * b->stride, a->width, box, &s);
        worst = row > worst ? row : worst;
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

/* Windows larger than this many pixels are blurred a strip of rows at a time, twice (once for
 * the motion, once for the residual), instead of into two planes of 12 bytes a pixel: a change
 * over a whole 10000 x 10000 screenshot would otherwise need 2.4 GB. */
#define STRIPS_ABOVE ((Py_ssize_t)1 << 22)

/* window_residual for a large window, with memory for a few rows: the same blurred rows, the
 * same row sums and the same residuals, computed as the rows come. `ox`, `oy`: the window's
 * place in the area (ex0, ey0, ew, eh) blurred around it. */
static int strip_residual(const pixels_t *a, const pixels_t *b, Py_ssize_t ex0, Py_ssize_t ey0,
                          Py_ssize_t ew, Py_ssize_t eh, Py_ssize_t ox, Py_ssize_t oy, Py_ssize_t w,
                          Py_ssize_t h, box_t inside, box_t trimmed, double still, float *worst,
                          double *motion, float *unmoved) {
    const size_t n = (size_t)(ew * a->channels), row = (size_t)ew * 3;
    /* Four of a's rows (a residual row reads rows y - 1 to y + 2), one of b's, one to discard. */
    float *rows = malloc(sizeof(float) * 6 * row);
    uint8_t *padded = malloc(2 * (n + 4 * (size_t)a->channels));
    uint16_t *rings = malloc(sizeof(uint16_t) * 12 * n);
    const int ok = rows && padded && rings;
    if (ok) {
        const blur_buffers_t buf_a = {padded, rings, rings + 5 * n};
        const blur_buffers_t buf_b = {padded + n + 4 * (size_t)a->channels, rings + 6 * n,
                                      rings + 11 * n};
        float *const brow = rows + 4 * row, *const spare = rows + 5 * row;
#define A_ROW(j) (rows + ((j) % 4) * row + ox * 3)
        double tx = 0, ty = 0;
        *motion = 0;
        if (w >= 2 && h >= 2) {
            rows_t ra = blur_rows(a, ex0, ey0, ew, eh, &buf_a);
            rows_t rb = blur_rows(b, ex0, ey0, ew, eh, &buf_b);
            for (Py_ssize_t r = 0; r < oy; r++) {
                blur_next(&ra, spare);
                blur_next(&rb, spare);
            }
            double sums[5] = {0, 0, 0, 0, 0};
            Py_ssize_t made = 0; /* window rows of a blurred so far */
            for (Py_ssize_t y = 0; y < h; y++) {
                for (; made <= y + 1 && made < h; made++) blur_next(&ra, A_ROW(made) - ox * 3);
                blur_next(&rb, brow);
                const float gscale = (y > 0 && y < h - 1) ? 0.5f : 1.0f;
                accumulate_row(A_ROW(y > 0 ? y - 1 : 0), A_ROW(y), A_ROW(y < h - 1 ? y + 1 : h - 1),
                               brow + ox * 3, w, gscale, sums);
            }
            solve_motion(sums, &tx, &ty);
            *motion = hypot(tx, ty);
        }
        const int moving = *motion >= still;
        const box_t box = moving ? trimmed : inside;
        const sampling_t s = sampling_for(tx, ty, w, box), still_s = sampling_for(0, 0, w, inside);
        rows_t ra = blur_rows(a, ex0, ey0, ew, eh, &buf_a);
        rows_t rb = blur_rows(b, ex0, ey0, ew, eh, &buf_b);
        for (Py_ssize_t r = 0; r < oy; r++) {
            blur_next(&ra, spare);
            blur_next(&rb, spare);
        }
        float most = 0, unmoved_most = 0;
        Py_ssize_t made = 0;
        const Py_ssize_t last = box.y1 > inside.y1 ? box.y1 : inside.y1;
        for (Py_ssize_t y = 0; y < last; y++) {
            for (; made <= y + 2 && made < h; made++) blur_next(&ra, A_ROW(made) - ox * 3);
            blur_next(&rb, brow);
            if (y >= box.y0 && y < box.y1) {
                const float found =
                    residual_row(A_ROW(clamp(y + s.ky, 0, h - 1)),
                                 A_ROW(clamp(y + s.ky + 1, 0, h - 1)), brow + ox * 3, w, box, &s);
                most = found > most ? found : most;
            }
            if (moving && y >= inside.y0 && y < inside.y1) {
                const float found = residual_row(A_ROW(clamp(y + still_s.ky, 0, h - 1)),
                                                 A_ROW(clamp(y + still_s.ky + 1, 0, h - 1)),
                                                 brow + ox * 3, w, inside, &still_s);
                unmoved_most = found > unmoved_most ? found : unmoved_most;
            }
        }
#undef A_ROW
        *worst = most;
        *unmoved = moving ? unmoved_most : most;
    }
    free(rows);
    free(padded);
    free(rings);
    return ok;
}

static inline Py_ssize_t least(Py_ssize_t u, Py_ssize_t v) { return u < v ? u : v; }
static inline Py_ssize_t most(Py_ssize_t u, Py_ssize_t v) { return u > v ? u : v; }

/* For each row of the area (x0, y0, w, h) of src: how many rows of one colour, all of it, end
 * there (0 when the row itself has two colours). */
static void plain_runs(const pixels_t *src, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t w,
                       Py_ssize_t h, Py_ssize_t *runs) {
    const int c = src->channels;
    const uint8_t *above = NULL;
    for (Py_ssize_t r = 0; r < h; r++) {
        const uint8_t *row = src->data + (y0 + r) * src->stride + x0 * c;
        /* Each pixel equal to the next: one colour. */
        const int plain = memcmp(row, row + c, (size_t)((w - 1) * c)) == 0;
        runs[r] = !plain ? 0 : (above && memcmp(row, above, (size_t)c) == 0 ? runs[r - 1] + 1 : 1);
        above = plain ? row : NULL;
    }
}

/*
 * Which rows a window needs blurred, from the runs of its area (plain_runs of a; the window is
 * rows [oy, oy + h) of it, and need_a and need_b are indexed by the area's rows, flat by the
 * window's). A window row is flat when a's rows within 3 of it (the blur's reach, then the
 * gradient's) are all of one colour: a's gradient is exactly 0 all along it, so its terms of
 * the motion's sums are all 0 and neither image is needed there. The residual reads b's rows
 * inside the box and a's from the row above it to two below (the motion moves a at most a
 * pixel). Rows of the area outside the window are never read.
 */
static void rows_needed(const Py_ssize_t *runs, Py_ssize_t eh, Py_ssize_t oy, Py_ssize_t h,
                        box_t inside, uint8_t *flat, uint8_t *need_a, uint8_t *need_b) {
    memset(need_a, 0, (size_t)eh);
    memset(need_b, 0, (size_t)eh);
    for (Py_ssize_t y = 0; y < h; y++) {
        const Py_ssize_t lo = most(oy + y - 3, 0), hi = least(oy + y + 3, eh - 1);
        flat[y] = runs[hi] >= hi - lo + 1;
        if (flat[y]) continue;
        need_b[oy + y] = 1;
        for (Py_ssize_t k = most(y - 1, 0); k <= least(y + 1, h - 1); k++) need_a[oy + k] = 1;
    }
    for (Py_ssize_t y = most(inside.y0 - 1, 0); y <= least(inside.y1 + 1, h - 1); y++)
        need_a[oy + y] = 1;
    for (Py_ssize_t y = inside.y0; y < inside.y1; y++) need_b[oy + y] = 1;
}

/* Both images' window blurred (from 2 px around it where the image has them, so that the
 * blur sees the window's true neighbours), the motion estimated over the window, and the
 * residual measured. Scratch memory is the window's size: it stays in cache, and no
 * page-sized plane is ever allocated for a handful of small regions. */
static int window_residual(const pixels_t *a, const pixels_t *b, Py_ssize_t iw, Py_ssize_t ih,
                           box_t win, box_t inside, box_t trimmed, double still, float *worst,
                           double *motion, float *unmoved, Py_ssize_t strips_above) {
    const Py_ssize_t ex0 = win.x0 >= 2 ? win.x0 - 2 : 0, ey0 = win.y0 >= 2 ? win.y0 - 2 : 0;
    const Py_ssize_t ex1 = win.x1 + 2 <= iw ? win.x1 + 2 : iw;
    const Py_ssize_t ey1 = win.y1 + 2 <= ih ? win.y1 + 2 : ih;
    const Py_ssize_t ew = ex1 - ex0, eh = ey1 - ey0, w = win.x1 - win.x0, h = win.y1 - win.y0;
    if (ew * eh > strips_above)
        return strip_residual(a, b, ex0, ey0, ew, eh, win.x0 - ex0, win.y0 - ey0, w, h, inside,
                              trimmed, still, worst, motion, unmoved);
    const size_t n = (size_t)(ew * a->channels);
    float *planes = malloc(sizeof(float) * 6 * (size_t)(ew * eh));
    blur_buffers_t buf = {
        .padded = malloc(n + 4 * (size_t)a->channels),
        .ring = malloc(sizeof(uint16_t) * 5 * n),
        .column = malloc(sizeof(uint16_t) * n),
    };
    /* Per row of the area: the run of one colour ending there, and whether a's and b's are
     * blurred; per row of the window: whether it is flat. */
    Py_ssize_t *runs = malloc(sizeof(Py_ssize_t) * (size_t)eh);
    uint8_t *rows = malloc(3 * (size_t)eh);
    const int ok = planes && buf.padded && buf.ring && buf.column && runs && rows;
    if (ok) {
        const Py_ssize_t oy = win.y0 - ey0;
        uint8_t *need_a = rows, *need_b = rows + eh, *flat = rows + 2 * eh;
        plain_runs(a, ex0, ey0, ew, eh, runs);
        rows_needed(runs, eh, oy, h, inside, flat, need_a, need_b);
        const plane3_t area_a = {planes, ew * 3, ew, eh};
        const plane3_t area_b = {planes + 3 * ew * eh, ew * 3, ew, eh};
        blur_area_where(a, ex0, ey0, ew, eh, &area_a, &buf, need_a);
        blur_area_where(b, ex0, ey0, ew, eh, &area_b, &buf, need_b);
        const Py_ssize_t skip = oy * ew * 3 + (win.x0 - ex0) * 3;
        const plane3_t wa = {area_a.data + skip, ew * 3, w, h};
        const plane3_t wb = {area_b.data + skip, ew * 3, w, h};
        double tx = 0, ty = 0;
        *motion = 0;
        if (w >= 2 && h >= 2) {
            estimate_motion(&wa, &wb, flat, &tx, &ty);
            *motion = hypot(tx, ty);
        }
        *worst = residual_in(&wa, &wb, tx, ty, *motion >= still ? trimmed : inside);
        *unmoved = *motion >= still ? residual_in(&wa, &wb, 0, 0, inside) : *worst;
    }
    free(planes);
    free(buf.padded);
    free(buf.ring);
    free(buf.column);
    free(runs);
    free(rows);
    return ok;
}

int vfa_box_residual(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                     Py_ssize_t x, Py_ssize_t y, Py_ssize_t bw, Py_ssize_t bh, Py_ssize_t pad,
                     double still, float *residual, double *motion, float *unmoved) {
    const box_t win = {most(x - pad, 0), most(y - pad, 0), least(x + bw + pad, w),
                       least(y + bh + pad, h)};
    *residual = *unmoved = 0;
    *motion = 0;
    if (win.x1 <= win.x0 || win.y1 <= win.y0) return 0;
    const box_t inside = {x - win.x0, y - win.y0, x - win.x0 + bw, y - win.y0 + bh};
    /* A sub-pixel shift uncovers up to a pixel of new content along the image's own edges.
     * (Kept within the box: on an image a few pixels wide, nothing is left.) */
    const Py_ssize_t left = least(most(x, 2), x + bw), top = least(most(y, 2), y + bh);
    const box_t trimmed = {left - win.x0, top - win.y0, most(least(x + bw, w - 2), left) - win.x0,
                           most(least(y + bh, h - 2), top) - win.y0};
    if (!window_residual(a, b, w, h, win, inside, trimmed, still, residual, motion, unmoved,
                         STRIPS_ABOVE))
        return -1;
    return 0;
}

PyObject *vfa_motion_residual(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *win_obj, *inside_obj, *trimmed_obj;
    double still;
    Py_ssize_t strips_above = STRIPS_ABOVE;
    if (!PyArg_ParseTuple(args, "OOO!O!O!d|n", &a_obj, &b_obj, &PyTuple_Type, &win_obj,
                          &PyTuple_Type, &inside_obj, &PyTuple_Type, &trimmed_obj, &still,
                          &strips_above))
        return NULL;
    Py_buffer va, vb;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    PyObject *result = NULL;
    box_t win, inside, trimmed;
    if (a.channels != b.channels) {
        PyErr_SetString(PyExc_ValueError, "a and b must have the same number of channels");
        goto done;
    }
    if (parse_box(win_obj, &win, va.shape[1], va.shape[0], "window", "image") < 0) goto done;
    if (win.x1 == win.x0 || win.y1 == win.y0) {
        result = Py_BuildValue("ddd", 0.0, 0.0, 0.0);
        goto done;
    }
    if (parse_box(inside_obj, &inside, win.x1 - win.x0, win.y1 - win.y0, "inside", "window") < 0 ||
        parse_box(trimmed_obj, &trimmed, win.x1 - win.x0, win.y1 - win.y0, "trimmed", "window") < 0)
        goto done;
    float worst = 0, unmoved = 0;
    double motion = 0;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = window_residual(&a, &b, va.shape[1], va.shape[0], win, inside, trimmed, still, &worst,
                         &motion, &unmoved, strips_above);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("ddd", (double)worst, motion, (double)unmoved);
done:
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

VFA_DOC(vfa_motion_residual_doc,
             "motion_residual(a, b, window, inside, trimmed, still[, strips_above]) ->\n"
             "(residual, motion, unmoved)\n\n"
             "a, b: images of one shape (uint8, (H, W, 3|4)). Blurs both over `window`\n"
             "(x0, y0, x1, y1) like blur(), estimates the sub-pixel translation of b against a\n"
             "over the window, and returns the largest per-channel difference left inside\n"
             "`inside` (window-relative), or inside `trimmed` when the motion is `still` px or\n"
             "more, with the motion's length in px, and the largest difference left inside\n"
             "`inside` with no motion (the residual again when the motion is under `still`).\n"
             "Windows (with 2 px around) of more than strips_above pixels (default 4194304) are\n"
             "blurred a few rows at a time, in bounded memory, with the same results.");

/* ---- tile_residuals -------------------------------------------------------------------------- */

/* The tiles of a list of (x, y, w, h, dx, dy, limit), or NULL with ValueError. */
static vfa_tile_t *read_tiles(PyObject *list, Py_ssize_t *n) {
    PyObject *seq =
        PySequence_Fast(list, "tiles must be a sequence of (x, y, w, h, dx, dy, limit)");
    if (!seq) return NULL;
    *n = PySequence_Fast_GET_SIZE(seq);
    vfa_tile_t *tiles = malloc(sizeof(vfa_tile_t) * (size_t)(*n > 0 ? *n : 1));
    if (!tiles) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        vfa_tile_t *t = &tiles[i];
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "nnnnnnd", &t->x, &t->y, &t->w,
                                                      &t->h, &t->dx, &t->dy, &t->limit)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "tiles must be (x, y, w, h, dx, dy, limit) tuples");
            free(tiles);
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    return tiles;
}

/* A tile's window: pad px around it, inside both images once a is displaced by (dx, dy). */
static box_t tile_window(const vfa_tile_t *t, Py_ssize_t pad, Py_ssize_t w, Py_ssize_t h) {
    const box_t win = {most(most(t->x - pad, t->dx), 0), most(most(t->y - pad, t->dy), 0),
                       least(t->x + t->w + pad, least(w + least(t->dx, 0), w)),
                       least(t->y + t->h + pad, least(h + least(t->dy, 0), h))};
    return win;
}

int vfa_tiles_over(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                   const vfa_tile_t *tiles, Py_ssize_t n, Py_ssize_t pad, double still,
                   Py_ssize_t *failed) {
    int ok = 1;
    *failed = -1;
    for (Py_ssize_t i = 0; i < n && ok && *failed < 0; i++) {
        const vfa_tile_t *t = &tiles[i];
        const box_t win = tile_window(t, pad, w, h);
        if (win.x1 <= win.x0 || win.y1 <= win.y0) continue;
        /* The window of b, and of a displaced by (dx, dy), as images of their own. */
        const pixels_t wa = {a->data + (win.y0 - t->dy) * a->stride + (win.x0 - t->dx) * a->channels,
                             a->stride, a->channels};
        const pixels_t wb = {b->data + win.y0 * b->stride + win.x0 * b->channels, b->stride,
                             b->channels};
        const Py_ssize_t ww = win.x1 - win.x0, wh = win.y1 - win.y0;
        const box_t whole = {0, 0, ww, wh};
        /* The part of the tile a displaced base shows: beside the images' edges, the pixels
         * the displacement brings in from beyond them are left out. */
        const box_t inside = {most(t->x - win.x0, 0), most(t->y - win.y0, 0),
                              least(t->x + t->w - win.x0, ww), least(t->y + t->h - win.y0, wh)};
        if (inside.x1 <= inside.x0 || inside.y1 <= inside.y0) continue;
        float worst, unmoved;
        double motion;
        ok = window_residual(&wa, &wb, ww, wh, whole, inside, inside, still, &worst, &motion,
                             &unmoved, STRIPS_ABOVE);
        if (ok && (double)worst > t->limit) *failed = i;
    }
    return ok;
}

PyObject *vfa_tile_residuals(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *tiles_obj;
    Py_ssize_t pad;
    double still;
    if (!PyArg_ParseTuple(args, "OOOnd", &a_obj, &b_obj, &tiles_obj, &pad, &still)) return NULL;
    Py_buffer va, vb;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    const Py_ssize_t w = va.shape[1], h = va.shape[0];
    PyObject *result = NULL;
    Py_ssize_t n = 0;
    vfa_tile_t *tiles = NULL;
    if (a.channels != b.channels) {
        PyErr_SetString(PyExc_ValueError, "a and b must have the same number of channels");
        goto done;
    }
    if (!(tiles = read_tiles(tiles_obj, &n))) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (tiles[i].w < 1 || tiles[i].h < 1) {
            PyErr_Format(PyExc_ValueError,
                         "tile %zd is empty: its width and height must be 1 or more", i);
            goto done;
        }
    }
    Py_ssize_t failed = -1;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = vfa_tiles_over(&a, &b, w, h, tiles, n, pad, still, &failed);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyLong_FromSsize_t(failed);
done:
    free(tiles);
    PyBuffer_Release(&va);
    PyBuffer_Release(&vb);
    return result;
}

VFA_DOC(vfa_tile_residuals_doc,
        "tile_residuals(a, b, tiles, pad, still) -> int\n\n"
        "motion_residual() of each tile (x, y, w, h, dx, dy, limit) of images a and b, over a\n"
        "window of pad px around it that lies inside both images once a is displaced by\n"
        "(dx, dy), the window taken as an image of its own, and over the part of the tile in\n"
        "that window: the index of the first tile whose residual exceeds its limit, or -1.");
