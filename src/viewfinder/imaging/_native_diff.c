/* render_diff(): the diff image as palette indexes, ready to be written as an indexed PNG. */
#include "_native.h"

#include <string.h>

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

VF_CLONES
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
