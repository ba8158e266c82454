/*
 * Inner loops of the comparison engine.
 *
 * Each function takes numpy arrays through the buffer protocol and releases the GIL while it
 * runs, so comparisons can proceed in parallel threads. The Python side validates shapes and
 * options; the checks here only guard memory safety.
 *
 * The colour delta and anti-aliasing test follow pixelmatch 7.2.0's arithmetic operation for
 * operation, in IEEE double precision, because the compatibility mode must reproduce its counts
 * exactly. The module is compiled with -ffp-contract=off so that no fused multiply-add changes a
 * rounding.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_buffers.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Per-pixel labels written by classify() and read by render_diff() and regions(). */
enum {
    LABEL_SAME = 0,    /* identical, or not compared */
    LABEL_CHANGED = 1, /* colour delta over the threshold, candidate not darker */
    LABEL_DARKER = 2,  /* colour delta over the threshold, candidate darker */
    LABEL_AA = 3,      /* over the threshold but anti-aliasing: not counted */
    LABEL_SUBTLE = 4,  /* bytes differ, colour delta within the threshold */
    LABEL_SIZE = 5,    /* outside one of the two images */
    LABEL_MASKED = 6,  /* inside a mask: neither compared nor counted */
    LABEL_MOVED = 7,   /* changed, but explained as content that moved */
    LABEL_NOISE = 8,   /* changed, but explained as rendering noise */
    LABEL_COUNT = 9
};

/* Palette indexes of the diff image; the palette itself is built in Python. */
enum {
    PAL_GRAYS = 32,
    PAL_CHANGED = 32,
    PAL_SIZE = 33,
    PAL_MASKED = 34,
    PAL_MOVED = 35,
    PAL_NOISE = 36
};

#define ALWAYS_INLINE static inline __attribute__((always_inline))

typedef struct {
    const uint8_t *data;
    Py_ssize_t stride; /* bytes from one row to the next */
    uint8_t *siblings; /* memo of has_many_siblings per pixel: 0 unknown, 1 no, 2 yes */
} image_t;

typedef struct {
    int r, g, b, a;
} rgba_t;

/*
 * Pixel access is specialised on the channel count: every caller passes a constant 3 (opaque
 * RGB) or 4 (RGBA), so the compiler generates one branch-free variant of each loop per layout.
 */
ALWAYS_INLINE rgba_t load_rgba(const image_t *im, Py_ssize_t x, Py_ssize_t y, const int ch) {
    const uint8_t *p = im->data + y * im->stride + x * ch;
    rgba_t c = {p[0], p[1], p[2], ch == 4 ? p[3] : 255};
    return c;
}

/* The pixel as one 32-bit value, for equality tests only. */
ALWAYS_INLINE uint32_t load_u32(const image_t *im, Py_ssize_t x, Py_ssize_t y, const int ch) {
    const uint8_t *p = im->data + y * im->stride + x * ch;
    if (ch == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
}

/* Background a semi-transparent pixel is blended against; k is the pixel's RGBA byte offset. */
static void background(Py_ssize_t k, int checkerboard, double *rb, double *gb, double *bb) {
    if (!checkerboard) {
        *rb = *gb = *bb = 255;
        return;
    }
    *rb = 48 + 159 * (double)(k % 2);
    *gb = 48 + 159 * (double)(((int64_t)((double)k / 1.618033988749895)) % 2);
    *bb = 48 + 159 * (double)(((int64_t)((double)k / 2.618033988749895)) % 2);
}

/* Signed YIQ distance (negative when the second pixel is darker), as pixelmatch 7.2.0. */
ALWAYS_INLINE double color_delta(rgba_t p1, rgba_t p2, Py_ssize_t k, int checkerboard) {
    double dr = p1.r - p2.r, dg = p1.g - p2.g, db = p1.b - p2.b;
    if (p1.a < 255 || p2.a < 255) {
        double rb, gb, bb;
        int da = p1.a - p2.a;
        background(k, checkerboard, &rb, &gb, &bb);
        dr = ((double)(p1.r * p1.a - p2.r * p2.a) - rb * da) / 255;
        dg = ((double)(p1.g * p1.a - p2.g * p2.a) - gb * da) / 255;
        db = ((double)(p1.b * p1.a - p2.b * p2.a) - bb * da) / 255;
    }
    double y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
    double i = dr * 0.59597799 - dg * 0.27417610 - db * 0.32180189;
    double q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694;
    double delta = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q;
    return y > 0 ? -delta : delta;
}

/* Brightness difference between a centre pixel and a neighbour (0 when identical). */
ALWAYS_INLINE double brightness_delta(rgba_t c, rgba_t n, Py_ssize_t k, int checkerboard) {
    int ir = c.r - n.r, ig = c.g - n.g, ib = c.b - n.b, ia = c.a - n.a;
    if (!ir && !ig && !ib && !ia) return 0;
    double dr = ir, dg = ig, db = ib;
    if (c.a < 255 || n.a < 255) {
        double rb, gb, bb;
        background(k, checkerboard, &rb, &gb, &bb);
        dr = ((double)(c.r * c.a - n.r * n.a) - rb * ia) / 255;
        dg = ((double)(c.g * c.a - n.g * n.a) - gb * ia) / 255;
        db = ((double)(c.b * c.a - n.b * n.a) - bb * ia) / 255;
    }
    return dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
}

/* Neighbours in pixelmatch's scan order: column by column, top to bottom within a column. */
static const int NEIGHBOUR_DX[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
static const int NEIGHBOUR_DY[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

ALWAYS_INLINE int is_interior(Py_ssize_t x, Py_ssize_t y, Py_ssize_t w, Py_ssize_t h) {
    return x > 0 && y > 0 && x < w - 1 && y < h - 1;
}

ALWAYS_INLINE uint32_t u32_at(const uint8_t *p, const int ch) {
    if (ch == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
}

/*
 * True when the pixel has three or more identical neighbours (edges count as one). Answers are
 * memoised: on anti-aliasing-heavy pairs the same flat pixels are asked about many times.
 */
ALWAYS_INLINE int has_many_siblings(const image_t *im, Py_ssize_t x1, Py_ssize_t y1,
                                    Py_ssize_t w, Py_ssize_t h, const int ch) {
    uint8_t *memo = im->siblings ? &im->siblings[y1 * w + x1] : NULL;
    if (memo && *memo) return *memo - 1;
    int found = 0;
    const uint8_t *p = im->data + y1 * im->stride + x1 * ch;
    uint32_t v = u32_at(p, ch);
    if (is_interior(x1, y1, w, h)) {
        /* Inside the image the count needs no bounds and no early exit. */
        int same = 0;
        for (int n = 0; n < 8; n++)
            same += u32_at(p + NEIGHBOUR_DY[n] * im->stride + NEIGHBOUR_DX[n] * ch, ch) == v;
        found = same > 2;
    } else {
        Py_ssize_t x0 = x1 > 0 ? x1 - 1 : 0, y0 = y1 > 0 ? y1 - 1 : 0;
        Py_ssize_t x2 = x1 < w - 1 ? x1 + 1 : w - 1, y2 = y1 < h - 1 ? y1 + 1 : h - 1;
        int zeroes = 1; /* on the edge */
        for (Py_ssize_t x = x0; x <= x2 && !found; x++) {
            for (Py_ssize_t y = y0; y <= y2; y++) {
                if (x == x1 && y == y1) continue;
                zeroes += load_u32(im, x, y, ch) == v;
                if (zeroes > 2) {
                    found = 1;
                    break;
                }
            }
        }
    }
    if (memo) *memo = (uint8_t)(found + 1);
    return found;
}

/*
 * Anti-aliasing test of pixel (x1, y1) of `im` (Vysniauskas 2009, as pixelmatch): the pixel sits
 * between a darker and a brighter neighbour, and one of those extremes is a flat area in both
 * images. Neighbours are visited in pixelmatch's order and the first strict extreme wins,
 * because ties decide which extreme is examined.
 */
ALWAYS_INLINE int antialiased(const image_t *im, const image_t *a, const image_t *b,
                              Py_ssize_t x1, Py_ssize_t y1, Py_ssize_t w, Py_ssize_t h,
                              int checkerboard, const int ch) {
    Py_ssize_t k = (y1 * w + x1) * 4;
    rgba_t c = load_rgba(im, x1, y1, ch);
    double min = 0, max = 0;
    Py_ssize_t min_x = 0, min_y = 0, max_x = 0, max_y = 0;
    if (is_interior(x1, y1, w, h)) {
        const uint8_t *p = im->data + y1 * im->stride + x1 * ch;
        int zeroes = 0, min_n = 0, max_n = 0;
        for (int n = 0; n < 8; n++) {
            const uint8_t *q = p + NEIGHBOUR_DY[n] * im->stride + NEIGHBOUR_DX[n] * ch;
            rgba_t nb = {q[0], q[1], q[2], ch == 4 ? q[3] : 255};
            double delta = brightness_delta(c, nb, k, checkerboard);
            if (delta == 0) {
                if (++zeroes > 2) return 0;
            } else if (delta < min) {
                min = delta;
                min_n = n;
            } else if (delta > max) {
                max = delta;
                max_n = n;
            }
        }
        min_x = x1 + NEIGHBOUR_DX[min_n];
        min_y = y1 + NEIGHBOUR_DY[min_n];
        max_x = x1 + NEIGHBOUR_DX[max_n];
        max_y = y1 + NEIGHBOUR_DY[max_n];
    } else {
        Py_ssize_t x0 = x1 > 0 ? x1 - 1 : 0, y0 = y1 > 0 ? y1 - 1 : 0;
        Py_ssize_t x2 = x1 < w - 1 ? x1 + 1 : w - 1, y2 = y1 < h - 1 ? y1 + 1 : h - 1;
        int zeroes = 1; /* on the edge */
        for (Py_ssize_t x = x0; x <= x2; x++) {
            for (Py_ssize_t y = y0; y <= y2; y++) {
                if (x == x1 && y == y1) continue;
                double delta = brightness_delta(c, load_rgba(im, x, y, ch), k, checkerboard);
                if (delta == 0) {
                    if (++zeroes > 2) return 0;
                } else if (delta < min) {
                    min = delta;
                    min_x = x;
                    min_y = y;
                } else if (delta > max) {
                    max = delta;
                    max_x = x;
                    max_y = y;
                }
            }
        }
    }
    if (min == 0 || max == 0) return 0;
    return (has_many_siblings(a, min_x, min_y, w, h, ch) &&
            has_many_siblings(b, min_x, min_y, w, h, ch)) ||
           (has_many_siblings(a, max_x, max_y, w, h, ch) &&
            has_many_siblings(b, max_x, max_y, w, h, ch));
}

/* ---- buffer helpers ---------------------------------------------------------------------- */

static int get_image(PyObject *obj, Py_buffer *view, image_t *im, int *channels, const char *name) {
    if (get_uint8_image(obj, view, name) < 0) return -1;
    im->data = view->buf;
    im->stride = view->strides[0];
    im->siblings = NULL;
    *channels = (int)view->shape[2];
    return 0;
}

static int get_plane(PyObject *obj, Py_buffer *view, int writable, const char *name) {
    int flags = PyBUF_STRIDED_RO | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    if (view->ndim != 2 || view->itemsize != 1 || view->strides[1] != 1 || view->strides[0] < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be a 2-D uint8 array with contiguous rows", name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Bytes of `word` equal to `value` get their high bit set (exact, no false positives). */
ALWAYS_INLINE uint64_t bytes_equal(uint64_t word, uint8_t value) {
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t t = word ^ (0x0101010101010101ull * value);
    return ~(((t & low7) + low7) | t | low7);
}

/* ---- classify ------------------------------------------------------------------------------ */

typedef struct {
    image_t a, b;
    Py_ssize_t w, h;
    double max_delta;
    int include_aa, checkerboard;
    uint8_t *labels;
    Py_ssize_t lstride;
    Py_ssize_t counts[LABEL_COUNT];
} classify_t;

ALWAYS_INLINE void classify_pixel(classify_t *job, uint8_t *lrow, Py_ssize_t x, Py_ssize_t y,
                                  const int ch) {
    const image_t *a = &job->a, *b = &job->b;
    if (load_u32(a, x, y, ch) == load_u32(b, x, y, ch)) return;
    if (lrow[x] == LABEL_MASKED) {
        job->counts[LABEL_MASKED]++;
        return;
    }
    double delta = color_delta(load_rgba(a, x, y, ch), load_rgba(b, x, y, ch), (y * job->w + x) * 4,
                               job->checkerboard);
    int label;
    if (fabs(delta) > job->max_delta) {
        if (!job->include_aa &&
            (antialiased(a, a, b, x, y, job->w, job->h, job->checkerboard, ch) ||
             antialiased(b, b, a, x, y, job->w, job->h, job->checkerboard, ch)))
            label = LABEL_AA;
        else
            label = delta < 0 ? LABEL_DARKER : LABEL_CHANGED;
    } else {
        label = LABEL_SUBTLE;
    }
    lrow[x] = (uint8_t)label;
    job->counts[label]++;
}

ALWAYS_INLINE void classify_rows(classify_t *job, const int ch) {
    Py_ssize_t nbytes = job->w * ch;
    for (Py_ssize_t y = 0; y < job->h; y++) {
        const uint8_t *ra = job->a.data + y * job->a.stride, *rb = job->b.data + y * job->b.stride;
        /* Most rows of two screenshots are identical: one memcmp settles them. */
        if (memcmp(ra, rb, (size_t)nbytes) == 0) continue;
        uint8_t *lrow = job->labels + y * job->lstride;
        /* Compare 8 bytes at a time; look at a pixel only where its bytes differ. */
        Py_ssize_t next = 0;
        for (Py_ssize_t i = 0; i < nbytes; i += 8) {
            Py_ssize_t end = i + 8 < nbytes ? i + 8 : nbytes;
            if (end - i == 8) {
                uint64_t wa, wb;
                memcpy(&wa, ra + i, 8);
                memcpy(&wb, rb + i, 8);
                if (wa == wb) continue;
            }
            Py_ssize_t first = i / ch, last = (end - 1) / ch;
            for (Py_ssize_t x = first > next ? first : next; x <= last; x++)
                classify_pixel(job, lrow, x, y, ch);
            next = last + 1;
        }
    }
}

static void classify_rgb(classify_t *job) { classify_rows(job, 3); }
static void classify_rgba(classify_t *job) { classify_rows(job, 4); }

PyDoc_STRVAR(classify_doc,
             "classify(a, b, width, height, max_delta, include_aa, checkerboard, labels)\n"
             "--\n\n"
             "Label the differing pixels of the top-left width x height area of two images with\n"
             "the same channel count. Pixels already labelled masked are skipped. Returns the\n"
             "counts (changed, darker, antialiased, subtle, masked) of differing pixels.");

static PyObject *classify(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *labels_obj;
    classify_t job = {0};
    if (!PyArg_ParseTuple(args, "OOnndppO", &a_obj, &b_obj, &job.w, &job.h, &job.max_delta,
                          &job.include_aa, &job.checkerboard, &labels_obj))
        return NULL;
    Py_buffer va, vb, vl;
    int ca, cb;
    if (get_image(a_obj, &va, &job.a, &ca, "a") < 0) return NULL;
    if (get_image(b_obj, &vb, &job.b, &cb, "b") < 0) goto fail_a;
    if (get_plane(labels_obj, &vl, 1, "labels") < 0) goto fail_b;
    if (ca != cb) {
        PyErr_SetString(PyExc_ValueError, "a and b must have the same number of channels");
        goto fail_l;
    }
    if (job.w < 0 || job.h < 0 || job.w > va.shape[1] || job.w > vb.shape[1] ||
        job.h > va.shape[0] || job.h > vb.shape[0] || job.w > vl.shape[1] ||
        job.h > vl.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "compared area exceeds an input");
        goto fail_l;
    }
    job.labels = vl.buf;
    job.lstride = vl.strides[0];
    if (!job.include_aa && job.w * job.h > 0) {
        /* calloc maps zero pages lazily: only the neighbourhoods examined cost memory. */
        job.a.siblings = calloc((size_t)(job.w * job.h), 1);
        job.b.siblings = calloc((size_t)(job.w * job.h), 1);
    }
    Py_BEGIN_ALLOW_THREADS
    if (ca == 3)
        classify_rgb(&job);
    else
        classify_rgba(&job);
    Py_END_ALLOW_THREADS
    free(job.a.siblings);
    free(job.b.siblings);
    PyBuffer_Release(&vl);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&va);
    return Py_BuildValue("nnnnn", job.counts[LABEL_CHANGED], job.counts[LABEL_DARKER],
                         job.counts[LABEL_AA], job.counts[LABEL_SUBTLE],
                         job.counts[LABEL_MASKED]);
fail_l:
    PyBuffer_Release(&vl);
fail_b:
    PyBuffer_Release(&vb);
fail_a:
    PyBuffer_Release(&va);
    return NULL;
}

/* ---- unfilter ------------------------------------------------------------------------------ */

ALWAYS_INLINE int paeth(int a, int b, int c) {
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    int bc = pb <= pc ? b : c;
    return pa <= pb && pa <= pc ? a : bc;
}

#ifdef __SSE2__
/*
 * Paeth rows are the slowest part of decoding screenshots (each byte depends on the byte one
 * pixel to its left), so they run one pixel per step in 16-bit SSE2 lanes.
 */
/* Pixels go through general registers: a 3-byte memcpy via the stack stalls store forwarding. */
ALWAYS_INLINE __m128i load_px(const uint8_t *p, const int bpp) {
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    if (bpp == 4) memcpy(&v, p, 4);
    return _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)v), _mm_setzero_si128());
}

ALWAYS_INLINE void store_px(uint8_t *p, __m128i v, const int bpp) {
    uint32_t out = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(v, v));
    if (bpp == 4) {
        memcpy(p, &out, 4);
    } else {
        p[0] = (uint8_t)out;
        p[1] = (uint8_t)(out >> 8);
        p[2] = (uint8_t)(out >> 16);
    }
}

ALWAYS_INLINE __m128i abs16(__m128i x) { return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x)); }

ALWAYS_INLINE __m128i select16(__m128i mask, __m128i yes, __m128i no) {
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

ALWAYS_INLINE void paeth_row(uint8_t *restrict dst, const uint8_t *restrict src,
                             const uint8_t *restrict up, Py_ssize_t n, const int bpp) {
    __m128i a = _mm_setzero_si128(), c = _mm_setzero_si128(), low = _mm_set1_epi16(0xff);
    for (Py_ssize_t i = 0; i < n; i += bpp) {
        __m128i b = load_px(up + i, bpp), x = load_px(src + i, bpp);
        __m128i pa = _mm_sub_epi16(b, c), pb = _mm_sub_epi16(a, c);
        __m128i pc = abs16(_mm_add_epi16(pa, pb));
        pa = abs16(pa);
        pb = abs16(pb);
        __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
        __m128i nearest = select16(_mm_cmpeq_epi16(smallest, pa), a,
                                   select16(_mm_cmpeq_epi16(smallest, pb), b, c));
        a = _mm_and_si128(_mm_add_epi16(x, nearest), low);
        store_px(dst + i, a, bpp);
        c = b;
    }
}
#else
ALWAYS_INLINE void paeth_row(uint8_t *restrict dst, const uint8_t *restrict src,
                             const uint8_t *restrict up, Py_ssize_t n, const int bpp) {
    for (int i = 0; i < bpp; i++) dst[i] = (uint8_t)(src[i] + up[i]);
    for (Py_ssize_t i = bpp; i < n; i++)
        dst[i] = (uint8_t)(src[i] + paeth(dst[i - bpp], up[i], up[i - bpp]));
}
#endif

/* One row; `up` is the previous unfiltered row (all zeros above the first). */
ALWAYS_INLINE int unfilter_row(uint8_t *restrict dst, const uint8_t *restrict src,
                               const uint8_t *restrict up, Py_ssize_t n, int filter,
                               const int bpp) {
    switch (filter) {
    case 0:
        memcpy(dst, src, (size_t)n);
        return 0;
    case 1:
        for (int i = 0; i < bpp; i++) dst[i] = src[i];
        for (Py_ssize_t i = bpp; i < n; i++) dst[i] = (uint8_t)(src[i] + dst[i - bpp]);
        return 0;
    case 2:
        for (Py_ssize_t i = 0; i < n; i++) dst[i] = (uint8_t)(src[i] + up[i]);
        return 0;
    case 3:
        for (int i = 0; i < bpp; i++) dst[i] = (uint8_t)(src[i] + (up[i] >> 1));
        for (Py_ssize_t i = bpp; i < n; i++)
            dst[i] = (uint8_t)(src[i] + ((dst[i - bpp] + up[i]) >> 1));
        return 0;
    case 4:
        paeth_row(dst, src, up, n, bpp);
        return 0;
    default:
        return -1;
    }
}

static Py_ssize_t unfilter_rows(const uint8_t *raw, uint8_t *out, const uint8_t *zeros,
                                Py_ssize_t first, Py_ssize_t nrows, Py_ssize_t rowbytes, int bpp) {
    for (Py_ssize_t r = 0; r < nrows; r++) {
        Py_ssize_t y = first + r;
        const uint8_t *src = raw + r * (rowbytes + 1);
        uint8_t *dst = out + y * rowbytes;
        const uint8_t *up = y > 0 ? dst - rowbytes : zeros;
        int bad = bpp == 3 ? unfilter_row(dst, src + 1, up, rowbytes, src[0], 3)
                           : unfilter_row(dst, src + 1, up, rowbytes, src[0], 4);
        if (bad) return y;
    }
    return -1;
}

PyDoc_STRVAR(unfilter_doc,
             "unfilter(raw, out, first_row)\n"
             "--\n\n"
             "Undo PNG row filters of 8-bit, non-interlaced RGB or RGBA data. `raw` holds whole\n"
             "inflated rows from `first_row` on, each prefixed by its filter type; `out` is the\n"
             "C-contiguous (height, width, 3 or 4) image, whose earlier rows are already done.\n"
             "Returns -1, or the first row with an unknown filter type.");

static PyObject *unfilter(PyObject *self, PyObject *args) {
    PyObject *raw_obj, *out_obj;
    Py_ssize_t first;
    if (!PyArg_ParseTuple(args, "OOn", &raw_obj, &out_obj, &first)) return NULL;
    Py_buffer vr, vo;
    if (PyObject_GetBuffer(raw_obj, &vr, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(out_obj, &vo, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&vr);
        return NULL;
    }
    PyObject *result = NULL;
    if (vo.ndim != 3 || vo.itemsize != 1 || (vo.shape[2] != 3 && vo.shape[2] != 4)) {
        PyErr_SetString(PyExc_ValueError, "out must be a (height, width, 3 or 4) uint8 array");
        goto done;
    }
    Py_ssize_t h = vo.shape[0], bpp = vo.shape[2], rowbytes = vo.shape[1] * vo.shape[2];
    Py_ssize_t nrows = vr.len / (rowbytes + 1);
    if (vr.len % (rowbytes + 1) || first < 0 || first + nrows > h) {
        PyErr_SetString(PyExc_ValueError, "raw data must hold whole rows inside the image");
        goto done;
    }
    uint8_t *zeros = NULL; /* the row "above" the first one */
    if (first == 0 && !(zeros = calloc((size_t)rowbytes + 1, 1))) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t bad_row;
    Py_BEGIN_ALLOW_THREADS
    bad_row = unfilter_rows(vr.buf, vo.buf, zeros, first, nrows, rowbytes, (int)bpp);
    Py_END_ALLOW_THREADS
    free(zeros);
    result = PyLong_FromSsize_t(bad_row);
done:
    PyBuffer_Release(&vo);
    PyBuffer_Release(&vr);
    return result;
}

/* ---- render_diff --------------------------------------------------------------------------- */

/* Palette index for each label; 0 keeps the faded gray. */
static const uint8_t label_palette[LABEL_COUNT] = {
    [LABEL_CHANGED] = PAL_CHANGED, [LABEL_DARKER] = PAL_CHANGED, [LABEL_SIZE] = PAL_SIZE,
    [LABEL_MASKED] = PAL_MASKED,   [LABEL_MOVED] = PAL_MOVED,     [LABEL_NOISE] = PAL_NOISE,
};

ALWAYS_INLINE void gray_row(uint8_t *restrict dst, const uint8_t *restrict p, Py_ssize_t n,
                            const int ch) {
    for (Py_ssize_t x = 0; x < n; x++, p += ch) {
        int luma = (p[0] * 77 + p[1] * 150 + p[2] * 29 + 128) >> 8;
        if (ch == 4) luma = 255 - (((255 - luma) * p[3] * 257 + 32896) >> 16);
        dst[x] = (uint8_t)(luma >> 3);
    }
}

static void render_rows(const uint8_t *labels, Py_ssize_t lstride, Py_ssize_t h, Py_ssize_t w,
                        const image_t *c, Py_ssize_t ch_, Py_ssize_t cw, int channels,
                        uint8_t *out, Py_ssize_t ostride) {
    for (Py_ssize_t y = 0; y < h; y++) {
        const uint8_t *lrow = labels + y * lstride;
        uint8_t *orow = out + y * ostride;
        orow[0] = 0; /* PNG filter type None */
        uint8_t *dst = orow + 1;
        Py_ssize_t inside = y < ch_ ? (cw < w ? cw : w) : 0;
        if (channels == 3)
            gray_row(dst, c->data + y * c->stride, inside, 3);
        else
            gray_row(dst, c->data + y * c->stride, inside, 4);
        if (inside < w) memset(dst + inside, PAL_SIZE, (size_t)(w - inside));
        for (Py_ssize_t x = 0; x < w;) {
            uint64_t word;
            if (x + 8 <= w && (memcpy(&word, lrow + x, 8), word == 0)) {
                x += 8;
                continue;
            }
            uint8_t v = lrow[x] < LABEL_COUNT ? label_palette[lrow[x]] : 0;
            if (v) dst[x] = v;
            x++;
        }
    }
}

PyDoc_STRVAR(render_diff_doc,
             "render_diff(labels, candidate, out)\n"
             "--\n\n"
             "Write the diff image as palette indexes into `out` (height, width + 1), whose first\n"
             "column is the PNG filter byte. Unflagged pixels get one of 32 gray levels from the\n"
             "candidate's luma (alpha blended against white).");

static PyObject *render_diff(PyObject *self, PyObject *args) {
    PyObject *labels_obj, *cand_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO", &labels_obj, &cand_obj, &out_obj)) return NULL;
    Py_buffer vl, vc, vo;
    image_t c;
    int channels;
    if (get_plane(labels_obj, &vl, 0, "labels") < 0) return NULL;
    if (get_image(cand_obj, &vc, &c, &channels, "candidate") < 0) goto fail_l;
    if (get_plane(out_obj, &vo, 1, "out") < 0) goto fail_c;
    Py_ssize_t h = vl.shape[0], w = vl.shape[1];
    if (vo.shape[0] != h || vo.shape[1] != w + 1) {
        PyErr_SetString(PyExc_ValueError, "out must have shape (height, width + 1)");
        goto fail_o;
    }
    Py_BEGIN_ALLOW_THREADS
    render_rows(vl.buf, vl.strides[0], h, w, &c, vc.shape[0], vc.shape[1], channels, vo.buf,
                vo.strides[0]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vo);
    PyBuffer_Release(&vc);
    PyBuffer_Release(&vl);
    Py_RETURN_NONE;
fail_o:
    PyBuffer_Release(&vo);
fail_c:
    PyBuffer_Release(&vc);
fail_l:
    PyBuffer_Release(&vl);
    return NULL;
}

/* ---- regions ------------------------------------------------------------------------------- */

typedef struct {
    Py_ssize_t x0, y0, x1, y1; /* inclusive bounds */
    Py_ssize_t count;
} box_t;

static Py_ssize_t uf_find(Py_ssize_t *parent, Py_ssize_t i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void uf_union(Py_ssize_t *parent, Py_ssize_t i, Py_ssize_t j) {
    i = uf_find(parent, i);
    j = uf_find(parent, j);
    if (i != j) parent[i > j ? i : j] = i < j ? i : j;
}

static inline void box_grow(box_t *a, const box_t *b) {
    if (b->x0 < a->x0) a->x0 = b->x0;
    if (b->y0 < a->y0) a->y0 = b->y0;
    if (b->x1 > a->x1) a->x1 = b->x1;
    if (b->y1 > a->y1) a->y1 = b->y1;
    a->count += b->count;
}

static int cmp_box(const void *pa, const void *pb) {
    const box_t *a = pa, *b = pb;
    if (a->y0 != b->y0) return a->y0 < b->y0 ? -1 : 1;
    if (a->x0 != b->x0) return a->x0 < b->x0 ? -1 : 1;
    return 0;
}

/* Per-cell exact bounding boxes of the flagged pixels (up to three label values). */
static void scan_cells(const uint8_t *labels, Py_ssize_t stride, Py_ssize_t w, Py_ssize_t h,
                       const uint8_t *flags, int nflags, Py_ssize_t cell, Py_ssize_t gw,
                       box_t *cells) {
    uint8_t f0 = flags[0], f1 = nflags > 1 ? flags[1] : f0, f2 = nflags > 2 ? flags[2] : f0;
    for (Py_ssize_t y = 0; y < h; y++) {
        const uint8_t *row = labels + y * stride;
        box_t *cell_row = cells + (y / cell) * gw;
        Py_ssize_t x = 0;
        for (; x < w; x += 8) {
            Py_ssize_t n = w - x < 8 ? w - x : 8;
            if (n == 8) {
                uint64_t word;
                memcpy(&word, row + x, 8);
                if (!(bytes_equal(word, f0) | bytes_equal(word, f1) | bytes_equal(word, f2)))
                    continue;
            }
            for (Py_ssize_t i = x; i < x + n; i++) {
                uint8_t v = row[i];
                if (v != f0 && v != f1 && v != f2) continue;
                box_t *b = &cell_row[i / cell];
                if (b->count == 0) {
                    b->x0 = b->x1 = i;
                    b->y0 = b->y1 = y;
                } else {
                    if (i < b->x0) b->x0 = i;
                    if (i > b->x1) b->x1 = i;
                    b->y1 = y; /* rows are visited in order */
                }
                b->count++;
            }
        }
    }
}

/*
 * Cluster flagged pixels: cells at most `gap` cells apart join one cluster; clusters whose boxes
 * overlap are merged. Returns the number of boxes (or -1 when out of memory); when that is more
 * than max_boxes, no box is written and the cells are left folded into their roots.
 */
static Py_ssize_t cluster(box_t *cells, Py_ssize_t gw, Py_ssize_t gh, Py_ssize_t gap,
                          Py_ssize_t max_boxes, box_t **out_boxes) {
    Py_ssize_t n = gw * gh;
    Py_ssize_t *parent = malloc(sizeof(Py_ssize_t) * (size_t)(n ? n : 1));
    if (!parent) return -1;
    for (Py_ssize_t i = 0; i < n; i++) parent[i] = i;
    for (Py_ssize_t cy = 0; cy < gh; cy++) {
        for (Py_ssize_t cx = 0; cx < gw; cx++) {
            Py_ssize_t i = cy * gw + cx;
            if (!cells[i].count) continue;
            for (Py_ssize_t dy = 0; dy <= gap && cy + dy < gh; dy++) {
                for (Py_ssize_t dx = -gap; dx <= gap; dx++) {
                    Py_ssize_t nx = cx + dx;
                    if ((dy == 0 && dx <= 0) || nx < 0 || nx >= gw) continue;
                    Py_ssize_t j = (cy + dy) * gw + nx;
                    if (cells[j].count) uf_union(parent, i, j);
                }
            }
        }
    }
    /* Roots keep the lowest index, so one forward pass folds every cell into its root. */
    Py_ssize_t nboxes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!cells[i].count) continue;
        Py_ssize_t r = uf_find(parent, i);
        if (r == i) {
            nboxes++;
        } else {
            box_grow(&cells[r], &cells[i]);
            cells[i].count = 0;
        }
    }
    free(parent);
    if (nboxes > max_boxes) return nboxes; /* the caller coarsens the grid and tries again */
    box_t *boxes = malloc(sizeof(box_t) * (size_t)(nboxes ? nboxes : 1));
    if (!boxes) return -1;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (cells[i].count) boxes[k++] = cells[i];
    /* Overlapping boxes would crop the same pixels twice: merge them until none overlap. */
    for (int merged = 1; merged;) {
        merged = 0;
        for (Py_ssize_t i = 0; i < nboxes; i++) {
            for (Py_ssize_t j = i + 1; j < nboxes; j++) {
                box_t *a = &boxes[i], *b = &boxes[j];
                if (a->x0 > b->x1 || b->x0 > a->x1 || a->y0 > b->y1 || b->y0 > a->y1) continue;
                box_grow(a, b);
                boxes[j--] = boxes[--nboxes];
                merged = 1;
            }
        }
    }
    qsort(boxes, (size_t)nboxes, sizeof(box_t), cmp_box);
    *out_boxes = boxes;
    return nboxes;
}

static Py_ssize_t find_regions(const uint8_t *labels, Py_ssize_t stride, Py_ssize_t w,
                               Py_ssize_t h, const uint8_t *flags, int nflags, Py_ssize_t cell,
                               Py_ssize_t gap, Py_ssize_t max_boxes, box_t **boxes) {
    Py_ssize_t gw = (w + cell - 1) / cell, gh = (h + cell - 1) / cell;
    box_t *cells = calloc((size_t)(gw * gh ? gw * gh : 1), sizeof(box_t));
    if (!cells) return -1;
    scan_cells(labels, stride, w, h, flags, nflags, cell, gw, cells);
    for (;;) {
        Py_ssize_t nboxes = cluster(cells, gw, gh, gap, max_boxes, boxes);
        if (nboxes <= max_boxes) {
            free(cells);
            return nboxes;
        }
        /* Too many clusters (heavy noise): halve the grid resolution and cluster again. */
        Py_ssize_t gw2 = (gw + 1) / 2, gh2 = (gh + 1) / 2;
        box_t *coarse = calloc((size_t)(gw2 * gh2), sizeof(box_t));
        if (!coarse) {
            free(cells);
            return -1;
        }
        for (Py_ssize_t i = 0; i < gw * gh; i++) {
            if (!cells[i].count) continue;
            box_t *c = &coarse[(i / gw / 2) * gw2 + (i % gw) / 2];
            if (c->count == 0)
                *c = cells[i];
            else
                box_grow(c, &cells[i]);
        }
        free(cells);
        cells = coarse;
        gw = gw2;
        gh = gh2;
    }
}

PyDoc_STRVAR(regions_doc,
             "regions(labels, flagged, cell, gap, max_boxes)\n"
             "--\n\n"
             "Cluster the pixels whose label is one of the (up to three) `flagged` bytes into\n"
             "boxes (x, y, width, height, count), top to bottom. Cells of `cell` pixels at most\n"
             "`gap` cells apart join; when more than max_boxes clusters form, the grid coarsens\n"
             "until they fit, so heavy noise gives a few coarse regions rather than thousands.");

static PyObject *regions(PyObject *self, PyObject *args) {
    PyObject *labels_obj;
    const char *flags;
    Py_ssize_t nflags, cell, gap, max_boxes;
    if (!PyArg_ParseTuple(args, "Oy#nnn", &labels_obj, &flags, &nflags, &cell, &gap, &max_boxes))
        return NULL;
    if (cell < 1 || gap < 0 || max_boxes < 1 || nflags < 1 || nflags > 3) {
        PyErr_SetString(PyExc_ValueError,
                        "cell and max_boxes must be >= 1, gap >= 0, and 1 to 3 flagged labels");
        return NULL;
    }
    Py_buffer vl;
    if (get_plane(labels_obj, &vl, 0, "labels") < 0) return NULL;
    box_t *boxes = NULL;
    Py_ssize_t nboxes;
    Py_BEGIN_ALLOW_THREADS
    nboxes = find_regions(vl.buf, vl.strides[0], vl.shape[1], vl.shape[0], (const uint8_t *)flags,
                          (int)nflags, cell, gap, max_boxes, &boxes);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vl);
    if (nboxes < 0) return PyErr_NoMemory();
    PyObject *list = PyList_New(nboxes);
    for (Py_ssize_t i = 0; list && i < nboxes; i++) {
        box_t *b = &boxes[i];
        PyObject *t = Py_BuildValue("nnnnn", b->x0, b->y0, b->x1 - b->x0 + 1, b->y1 - b->y0 + 1,
                                    b->count);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, t);
    }
    free(boxes);
    return list;
}

/* ---- module -------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"classify", classify, METH_VARARGS, classify_doc},
    {"unfilter", unfilter, METH_VARARGS, unfilter_doc},
    {"render_diff", render_diff, METH_VARARGS, render_diff_doc},
    {"regions", regions, METH_VARARGS, regions_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "Inner loops of the comparison engine.", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    struct {
        const char *name;
        int value;
    } constants[] = {
        {"LABEL_SAME", LABEL_SAME},       {"LABEL_CHANGED", LABEL_CHANGED},
        {"LABEL_DARKER", LABEL_DARKER},   {"LABEL_AA", LABEL_AA},
        {"LABEL_SUBTLE", LABEL_SUBTLE},   {"LABEL_SIZE", LABEL_SIZE},
        {"LABEL_MASKED", LABEL_MASKED},   {"LABEL_MOVED", LABEL_MOVED},
        {"LABEL_NOISE", LABEL_NOISE},     {"PAL_NOISE", PAL_NOISE},
        {"LABEL_COUNT", LABEL_COUNT},     {"PAL_GRAYS", PAL_GRAYS},
        {"PAL_CHANGED", PAL_CHANGED},     {"PAL_SIZE", PAL_SIZE},
        {"PAL_MASKED", PAL_MASKED},       {"PAL_MOVED", PAL_MOVED},
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++) {
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
