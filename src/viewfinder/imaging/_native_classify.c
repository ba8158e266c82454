/*
 * classify(): which differing pixels of two images count as changed, darker, anti-aliased or
 * subtle.
 *
 * The colour delta and anti-aliasing test follow pixelmatch 7.2.0's arithmetic operation for
 * operation, in IEEE double precision, because the compatibility mode must reproduce its counts
 * exactly. The module is compiled with -ffp-contract=off so that no fused multiply-add changes a
 * rounding.
 */
#include "_native.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

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

/* The pixel at p as one 32-bit value, for equality tests only. An RGB pixel takes two loads
 * (the byte after it may lie past the image), not the three of its bytes one by one: the
 * anti-aliasing test compares dozens of pixels, and classify ran 7-9% faster. */
ALWAYS_INLINE uint32_t u32_at(const uint8_t *p, const int ch) {
    if (ch == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint16_t low;
    memcpy(&low, p, 2);
    return (uint32_t)low | ((uint32_t)p[2] << 16);
}

ALWAYS_INLINE uint32_t load_u32(const image_t *im, Py_ssize_t x, Py_ssize_t y, const int ch) {
    return u32_at(im->data + y * im->stride + x * ch, ch);
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

/* The Y (brightness) part of YIQ of a colour difference, as pixelmatch 7.2.0 works it out. */
ALWAYS_INLINE double brightness(double dr, double dg, double db) {
    return dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
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
    double y = brightness(dr, dg, db);
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
    return brightness(dr, dg, db);
}

/* Neighbours in pixelmatch's scan order: column by column, top to bottom within a column. */
static const int NEIGHBOUR_DX[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
static const int NEIGHBOUR_DY[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

ALWAYS_INLINE int is_interior(Py_ssize_t x, Py_ssize_t y, Py_ssize_t w, Py_ssize_t h) {
    return x > 0 && y > 0 && x < w - 1 && y < h - 1;
}

/*
 * True when the pixel has three or more identical neighbours (edges count as one). Worked out
 * each time it is asked: the pixels it reads are in cache, having just been read around the
 * pixel tested, while a memo of the answers took a cache miss and an image-sized zeroing; the
 * corpora's comparisons ran 5-9% faster without it (only pairs differing at nearly every pixel,
 * anti-aliased throughout, ran up to 12% slower).
 */
ALWAYS_INLINE int has_many_siblings(const image_t *im, Py_ssize_t x1, Py_ssize_t y1,
                                    Py_ssize_t w, Py_ssize_t h, const int ch) {
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
        /* The edge case's loop without its branches, which depend on the pixels and were
         * mispredicted (classify 8-18% faster on the style corpus's glyph and column pairs).
         * An identical neighbour is a zero delta, and the test fails at the third zero in
         * whatever order, so three identical neighbours settle it before any arithmetic. Each
         * delta is brightness_delta's (opaque pixels need none of its blending), and the
         * extremes are the first strict ones in scan order, as the loop finds them. */
        const uint8_t *p = im->data + y1 * im->stride + x1 * ch;
        const uint32_t v = u32_at(p, ch);
        const uint8_t *q[8];
        int same = 0, opaque = c.a == 255;
        for (int n = 0; n < 8; n++) {
            q[n] = p + NEIGHBOUR_DY[n] * im->stride + NEIGHBOUR_DX[n] * ch;
            same += u32_at(q[n], ch) == v;
            if (ch == 4) opaque &= q[n][3] == 255;
        }
        if (same > 2) return 0;
        double delta[8];
        for (int n = 0; n < 8; n++) {
            if (opaque) {
                delta[n] = brightness(c.r - q[n][0], c.g - q[n][1], c.b - q[n][2]);
            } else {
                rgba_t nb = {q[n][0], q[n][1], q[n][2], ch == 4 ? q[n][3] : 255};
                delta[n] = brightness_delta(c, nb, k, checkerboard);
            }
        }
        int zeroes = 0, min_n = 0, max_n = 0;
        for (int n = 0; n < 8; n++) {
            const double d = delta[n];
            zeroes += d == 0;
            const int lower = d < min, higher = d > max;
            min = lower ? d : min;
            min_n = lower ? n : min_n;
            max = higher ? d : max;
            max_n = higher ? n : max_n;
        }
        if (zeroes > 2) return 0;
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

/* ---- classify ------------------------------------------------------------------------------ */

/*
 * The YIQ distance is a quadratic form of the channel differences (dr, dg, db) of two opaque
 * pixels, whose largest eigenvalue is 0.25607814: no distance exceeds 0.2561 * (dr^2 + dg^2 +
 * db^2). Below max_delta / 0.2561 (with a thousandth to spare for rounding, which errs by less
 * than 1e-12 here) a pixel is subtle without working its distance out: on a tinted area that is
 * nearly every pixel.
 */
#define YIQ_BOUND 0.2561
#define YIQ_SPARE 0.999

typedef struct {
    image_t a, b;
    Py_ssize_t w, h;
    double max_delta;
    int32_t subtle_within; /* sums of squared differences no greater are subtle (opaque pixels) */
    int include_aa, checkerboard, channels;
    uint8_t *labels;
    Py_ssize_t lstride;
} classify_t;

ALWAYS_INLINE void classify_pixel(const classify_t *job, uint8_t *lrow, Py_ssize_t x,
                                  Py_ssize_t y, const int ch, Py_ssize_t *counts) {
    const image_t *a = &job->a, *b = &job->b;
    if (load_u32(a, x, y, ch) == load_u32(b, x, y, ch)) return;
    if (lrow[x] == LABEL_MASKED) {
        counts[LABEL_MASKED]++;
        return;
    }
    const rgba_t pa = load_rgba(a, x, y, ch), pb = load_rgba(b, x, y, ch);
    if (pa.a == 255 && pb.a == 255) {
        const int32_t dr = pa.r - pb.r, dg = pa.g - pb.g, db = pa.b - pb.b;
        if (dr * dr + dg * dg + db * db <= job->subtle_within) {
            lrow[x] = LABEL_SUBTLE;
            counts[LABEL_SUBTLE]++;
            return;
        }
    }
    double delta = color_delta(pa, pb, (y * job->w + x) * 4, job->checkerboard);
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
    counts[label]++;
}

/* Rows are labelled in chunks of this many, each thread taking the next chunk left when it is
 * done with one: changes cluster (a paragraph, a card), and fixed halves would leave one thread
 * idle while the other labels them. */
#define CHUNK_ROWS 8
/* Pixels given the anti-aliasing test (the costly part, about 0.1 us each) after which a second
 * thread is started, when one may be: a thread costs some 40 us to start and stop, more than
 * the whole classification of a pair with a few small changes. */
#define HELP_AFTER 2000

typedef struct {
    const classify_t *job;
    atomic_size_t *next; /* the next chunk to take */
    Py_ssize_t counts[LABEL_COUNT];
} share_t;

/* The rows of the chunk starting at row `top`. */
ALWAYS_INLINE void classify_chunk(share_t *share, Py_ssize_t top, const int ch) {
    const classify_t *job = share->job;
    const Py_ssize_t nbytes = job->w * ch;
    const Py_ssize_t bottom = top + CHUNK_ROWS < job->h ? top + CHUNK_ROWS : job->h;
    for (Py_ssize_t y = top; y < bottom; y++) {
        const uint8_t *ra = job->a.data + y * job->a.stride;
        const uint8_t *rb = job->b.data + y * job->b.stride;
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
                classify_pixel(job, lrow, x, y, ch, share->counts);
            next = last + 1;
        }
    }
}

static void classify_chunk_rgb(share_t *share, Py_ssize_t top) { classify_chunk(share, top, 3); }
static void classify_chunk_rgba(share_t *share, Py_ssize_t top) { classify_chunk(share, top, 4); }

/* Takes the next chunk and labels it: 0 once none is left. */
static int take_chunk(share_t *share) {
    const Py_ssize_t top = (Py_ssize_t)atomic_fetch_add(share->next, 1) * CHUNK_ROWS;
    if (top >= share->job->h) return 0;
    if (share->job->channels == 3) classify_chunk_rgb(share, top);
    else classify_chunk_rgba(share, top);
    return 1;
}

static void *help(void *arg) {
    while (take_chunk(arg)) continue;
    return NULL;
}

/* The job's rows labelled, the counts added to counts. With threads == 2 a second thread is
 * started once this one has found HELP_AFTER pixels worth the anti-aliasing test, and both take
 * chunks until none is left (this one alone when the thread cannot be started). Each pixel's
 * label depends only on the images and its own label, so the threads never touch one
 * another's. */
static void classify_parts(const classify_t *job, int threads, Py_ssize_t *counts) {
    atomic_size_t next = 0;
    share_t shares[2] = {{job, &next, {0}}, {job, &next, {0}}};
    const Py_ssize_t *found = shares[0].counts;
    pthread_t helper;
    int helped = 0, may_help = threads > 1;
    while (take_chunk(&shares[0])) {
        if (may_help && found[LABEL_CHANGED] + found[LABEL_DARKER] + found[LABEL_AA] >= HELP_AFTER) {
            helped = pthread_create(&helper, NULL, help, &shares[1]) == 0;
            may_help = 0;
        }
    }
    if (helped) pthread_join(helper, NULL);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < LABEL_COUNT; k++) counts[k] += shares[i].counts[k];
}

VFN_DOC(vfn_classify_doc,
             "classify(a, b, width, height, max_delta, include_aa, checkerboard, labels,\n"
             "threads=1)\n"
             "--\n\n"
             "Label the differing pixels of the top-left width x height area of two images with\n"
             "the same channel count. Pixels already labelled masked are skipped. Returns the\n"
             "counts (changed, darker, antialiased, subtle, masked) of differing pixels. With\n"
             "threads=2, a second thread shares the rows once many pixels have needed the\n"
             "anti-aliasing test.");

PyObject *vfn_classify(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *labels_obj;
    classify_t job = {0};
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OOnndppO|i", &a_obj, &b_obj, &job.w, &job.h, &job.max_delta,
                          &job.include_aa, &job.checkerboard, &labels_obj, &threads))
        return NULL;
    if (threads < 1 || threads > 2) {
        PyErr_SetString(PyExc_ValueError, "threads must be 1 or 2");
        return NULL;
    }
    Py_buffer va, vb, vl;
    int ca, cb;
    if (vfn_get_image(a_obj, &va, &job.a, &ca, "a") < 0) return NULL;
    if (vfn_get_image(b_obj, &vb, &job.b, &cb, "b") < 0) goto fail_a;
    if (vfn_get_plane(labels_obj, &vl, 1, "labels") < 0) goto fail_b;
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
    /* (A NaN max_delta, which no distance exceeds, is left to the distances to settle.) */
    job.subtle_within = -1;
    if (job.max_delta >= 0) {
        const double within = job.max_delta * YIQ_SPARE / YIQ_BOUND;
        job.subtle_within = within < 3 * 255 * 255 ? (int32_t)within : 3 * 255 * 255;
    }
    job.labels = vl.buf;
    job.lstride = vl.strides[0];
    job.channels = ca;
    Py_ssize_t counts[LABEL_COUNT] = {0};
    Py_BEGIN_ALLOW_THREADS
    classify_parts(&job, threads, counts);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vl);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&va);
    return Py_BuildValue("nnnnn", counts[LABEL_CHANGED], counts[LABEL_DARKER], counts[LABEL_AA],
                         counts[LABEL_SUBTLE], counts[LABEL_MASKED]);
fail_l:
    PyBuffer_Release(&vl);
fail_b:
    PyBuffer_Release(&vb);
fail_a:
    PyBuffer_Release(&va);
    return NULL;
}
