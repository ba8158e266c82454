/* unfilter(): PNG row filters undone, the part of decoding that zlib does not do. */
#include "_native.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* One Paeth step in every 16-bit lane: left a, up b, up-left c, filtered x. */
ALWAYS_INLINE __m128i paeth_step(__m128i a, __m128i b, __m128i c, __m128i x) {
    __m128i pa = _mm_sub_epi16(b, c), pb = _mm_sub_epi16(a, c);
    __m128i pc = abs16(_mm_add_epi16(pa, pb));
    pa = abs16(pa);
    pb = abs16(pb);
    __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
    __m128i nearest = select16(_mm_cmpeq_epi16(smallest, pa), a,
                               select16(_mm_cmpeq_epi16(smallest, pb), b, c));
    return _mm_and_si128(_mm_add_epi16(x, nearest), _mm_set1_epi16(0xff));
}

/*
 * Most of a Paeth row of a screenshot is flat background: the filtered bytes are zero and the
 * pixels to the left, above and above-left are one colour, which Paeth then repeats. Such a
 * span is found 16 bytes at a time and copied from the row above, instead of going through the
 * chain of steps. Entered where the pixel to the left equals the one above it, so the span goes
 * on while the row above repeats itself one pixel on and nothing was filtered in: returns how
 * many bytes from `src` and `up` on, whole chunks, are such (`up` - bpp must be readable).
 */
ALWAYS_INLINE Py_ssize_t flat_span(const uint8_t *restrict src, const uint8_t *restrict up,
                                   Py_ssize_t n, const int bpp) {
    const __m128i zero = _mm_setzero_si128();
    Py_ssize_t k = 0;
    for (; k + 16 <= n; k += 16) {
        const __m128i s = _mm_loadu_si128((const __m128i *)(src + k));
        const __m128i u = _mm_loadu_si128((const __m128i *)(up + k));
        const __m128i left = _mm_loadu_si128((const __m128i *)(up + k - bpp));
        const __m128i same = _mm_and_si128(_mm_cmpeq_epi8(s, zero), _mm_cmpeq_epi8(u, left));
        if (_mm_movemask_epi8(same) != 0xffff) break;
    }
    return k;
}

ALWAYS_INLINE void paeth_row(uint8_t *restrict dst, const uint8_t *restrict src,
                             const uint8_t *restrict up, Py_ssize_t n, const int bpp) {
    __m128i a = _mm_setzero_si128(), c = _mm_setzero_si128();
    for (Py_ssize_t i = 0; i < n; i += bpp) {
        __m128i b = load_px(up + i, bpp), x = load_px(src + i, bpp);
        a = paeth_step(a, b, c, x);
        store_px(dst + i, a, bpp);
        c = b;
        const Py_ssize_t next = i + bpp;
        if (next + 16 <= n && _mm_movemask_epi8(_mm_cmpeq_epi16(a, b)) == 0xffff) {
            const Py_ssize_t k = flat_span(src + next, up + next, n - next, bpp);
            /* Bytes of a pixel cut by the span's end are written here and again by its step. */
            memcpy(dst + next, up + next, (size_t)k);
            i += k / bpp * bpp; /* a and c stay the colour */
        }
    }
}

/*
 * Two Paeth rows at once. A pixel waits for the one to its left, so a single row is one long
 * chain of dependent steps; the second row's pixel j needs only the first row's pixels up to j,
 * so running it two pixels behind, in the upper half of the same registers, makes two chains
 * advance for the price of one.
 */
ALWAYS_INLINE void paeth_rows2(uint8_t *restrict dst0, const uint8_t *restrict src0,
                               const uint8_t *restrict up0, uint8_t *restrict dst1,
                               const uint8_t *restrict src1, Py_ssize_t n, const int bpp) {
    const Py_ssize_t pixels = n / bpp;
    const __m128i zero = _mm_setzero_si128();
    __m128i a = zero, c = zero;
    for (Py_ssize_t k = 0; k < pixels + 2; k++) {
        const int first = k < pixels, second = k >= 2;
        const Py_ssize_t i = k * bpp, j = (k - 2) * bpp;
        __m128i b = _mm_unpacklo_epi64(first ? load_px(up0 + i, bpp) : zero,
                                       second ? load_px(dst0 + j, bpp) : zero);
        __m128i x = _mm_unpacklo_epi64(first ? load_px(src0 + i, bpp) : zero,
                                       second ? load_px(src1 + j, bpp) : zero);
        a = paeth_step(a, b, c, x);
        if (first) store_px(dst0 + i, a, bpp);
        if (second) store_px(dst1 + j, _mm_srli_si128(a, 8), bpp);
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

/* Palette indices (one byte a pixel) are few in screenshots' diff images: plain C is enough. */
ALWAYS_INLINE void paeth_row_1(uint8_t *restrict dst, const uint8_t *restrict src,
                               const uint8_t *restrict up, Py_ssize_t n) {
    dst[0] = (uint8_t)(src[0] + up[0]);
    for (Py_ssize_t i = 1; i < n; i++)
        dst[i] = (uint8_t)(src[i] + paeth(dst[i - 1], up[i], up[i - 1]));
}

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
        if (bpp == 1)
            paeth_row_1(dst, src, up, n);
        else
            paeth_row(dst, src, up, n, bpp);
        return 0;
    default:
        return -1;
    }
}

#ifdef __SSE2__
/* Whether under half a filtered row's 16-byte chunks are all zero: a row with little flat
 * background, whose Paeth steps gain more from running beside the next row's than from
 * skipping spans (flat_span). */
ALWAYS_INLINE int busy_row(const uint8_t *src, Py_ssize_t n) {
    Py_ssize_t zero = 0, chunks = n / 16;
    for (Py_ssize_t k = 0; k < chunks; k++) {
        const __m128i s = _mm_loadu_si128((const __m128i *)(src + 16 * k));
        zero += _mm_movemask_epi8(_mm_cmpeq_epi8(s, _mm_setzero_si128())) == 0xffff;
    }
    return 2 * zero < chunks;
}
#endif

VF_CLONES
static Py_ssize_t unfilter_rows(const uint8_t *raw, uint8_t *out, const uint8_t *zeros,
                                Py_ssize_t first, Py_ssize_t nrows, Py_ssize_t rowbytes, int bpp) {
    for (Py_ssize_t r = 0; r < nrows; r++) {
        Py_ssize_t y = first + r;
        const uint8_t *src = raw + r * (rowbytes + 1);
        uint8_t *dst = out + y * rowbytes;
        const uint8_t *up = y > 0 ? dst - rowbytes : zeros;
#ifdef __SSE2__
        const uint8_t *next = src + rowbytes + 1;
        if (src[0] == 4 && r + 1 < nrows && next[0] == 4 && (bpp == 3 || bpp == 4) &&
            rowbytes >= 2 * bpp && busy_row(src + 1, rowbytes)) {
            if (bpp == 3)
                paeth_rows2(dst, src + 1, up, dst + rowbytes, next + 1, rowbytes, 3);
            else
                paeth_rows2(dst, src + 1, up, dst + rowbytes, next + 1, rowbytes, 4);
            r++;
            continue;
        }
#endif
        int bad = bpp == 3   ? unfilter_row(dst, src + 1, up, rowbytes, src[0], 3)
                  : bpp == 4 ? unfilter_row(dst, src + 1, up, rowbytes, src[0], 4)
                             : unfilter_row(dst, src + 1, up, rowbytes, src[0], 1);
        if (bad) return y;
    }
    return -1;
}

VFN_DOC(vfn_unfilter_doc,
             "unfilter(raw, out, first_row)\n"
             "--\n\n"
             "Undo PNG row filters of 8-bit, non-interlaced RGB, RGBA or palette data. `raw` holds\n"
             "whole inflated rows from `first_row` on, each prefixed by its filter type; `out` is\n"
             "the C-contiguous (height, width, 3, 4 or 1) image, whose earlier rows are done.\n"
             "Returns -1, or the first row with an unknown filter type.");

PyObject *vfn_unfilter(PyObject *self, PyObject *args) {
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
    if (vo.ndim != 3 || vo.itemsize != 1 ||
        (vo.shape[2] != 3 && vo.shape[2] != 4 && vo.shape[2] != 1)) {
        PyErr_SetString(PyExc_ValueError, "out must be a (height, width, 3, 4 or 1) uint8 array");
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
