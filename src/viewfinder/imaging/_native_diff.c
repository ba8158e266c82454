/* render_diff(): the diff image as palette indexes, ready to be written as an indexed PNG. */
#include "_native.h"

#include <string.h>

/* The labels from size mismatch to noise take the palette's indexes from PAL_SIZE on, in order,
 * which paint_row() computes instead of looking them up: a table lookup does not vectorise. */
_Static_assert(LABEL_MASKED == LABEL_SIZE + 1 && LABEL_MOVED == LABEL_SIZE + 2 &&
                   LABEL_NOISE == LABEL_SIZE + 3 && LABEL_COUNT == LABEL_NOISE + 1,
               "paint_row() maps LABEL_SIZE..LABEL_NOISE onto consecutive palette indexes");
_Static_assert(PAL_MASKED == PAL_SIZE + 1 && PAL_MOVED == PAL_SIZE + 2 && PAL_NOISE == PAL_SIZE + 3,
               "paint_row() maps LABEL_SIZE..LABEL_NOISE onto consecutive palette indexes");

ALWAYS_INLINE void gray_row(uint8_t *restrict dst, const uint8_t *restrict p, Py_ssize_t n,
                            const int ch) {
    for (Py_ssize_t x = 0; x < n; x++, p += ch) {
        int luma = (p[0] * 77 + p[1] * 150 + p[2] * 29 + 128) >> 8;
        if (ch == 4) luma = 255 - (((255 - luma) * p[3] * 257 + 32896) >> 16);
        dst[x] = (uint8_t)(luma >> 3);
    }
}

/* A flagged pixel's colour over the gray: changed red, moved orange, noise pink, size mismatch
 * blue, masked gray. Without branches, so that it runs 32 labels a step: the anti-aliased and
 * subtle pixels that keep the gray lie all along text, where skipping unflagged words stalls. */
ALWAYS_INLINE void paint_row(uint8_t *restrict dst, const uint8_t *restrict labels,
                             Py_ssize_t n) {
    for (Py_ssize_t x = 0; x < n; x++) {
        uint8_t l = labels[x];
        uint8_t v = l == LABEL_CHANGED || l == LABEL_DARKER ? PAL_CHANGED
                    : l >= LABEL_SIZE && l <= LABEL_NOISE   ? (uint8_t)(l - LABEL_SIZE + PAL_SIZE)
                                                            : 0;
        dst[x] = v ? v : dst[x];
    }
}

VF_CLONES
static void render_rows(const uint8_t *labels, Py_ssize_t lstride, Py_ssize_t h, Py_ssize_t w,
                        const image_t *c, Py_ssize_t ch_, Py_ssize_t cw, int channels,
                        uint8_t *out, Py_ssize_t ostride) {
    for (Py_ssize_t y = 0; y < h; y++) {
        uint8_t *orow = out + y * ostride;
        orow[0] = 0; /* PNG filter type None */
        uint8_t *dst = orow + 1;
        Py_ssize_t inside = y < ch_ ? (cw < w ? cw : w) : 0;
        if (channels == 3)
            gray_row(dst, c->data + y * c->stride, inside, 3);
        else
            gray_row(dst, c->data + y * c->stride, inside, 4);
        if (inside < w) memset(dst + inside, PAL_SIZE, (size_t)(w - inside));
        paint_row(dst, labels + y * lstride, w);
    }
}

VFN_DOC(vfn_render_diff_doc,
             "render_diff(labels, candidate, out)\n"
             "--\n\n"
             "Write the diff image as palette indexes into `out` (height, width + 1), whose first\n"
             "column is the PNG filter byte. Unflagged pixels get one of 32 gray levels from the\n"
             "candidate's luma (alpha blended against white).");

PyObject *vfn_render_diff(PyObject *self, PyObject *args) {
    PyObject *labels_obj, *cand_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO", &labels_obj, &cand_obj, &out_obj)) return NULL;
    Py_buffer vl, vc, vo;
    image_t c;
    int channels;
    if (vfn_get_plane(labels_obj, &vl, 0, "labels") < 0) return NULL;
    if (vfn_get_image(cand_obj, &vc, &c, &channels, "candidate") < 0) goto fail_l;
    if (vfn_get_plane(out_obj, &vo, 1, "out") < 0) goto fail_c;
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
