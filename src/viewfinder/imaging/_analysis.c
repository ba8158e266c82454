/*
 * Inner loops of the change analysis (the analysis package holds the method and its reasons).
 *
 * blur() smooths an area of an image, motion_residual() estimates the sub-pixel motion of a
 * window of two blurred images (one Lucas-Kanade step) and measures what the motion leaves
 * unexplained inside a box, envelope() checks that changed pixels stay within their
 * neighbours' range of colours, flips() counts those that crossed it, ranges() finds each
 * pixel's neighbourhood range and fits() checks glyphs displaced by a pixel or two against
 * those ranges, straight_run() finds a box's edge among changed pixels, signatures() hashes
 * the rows or columns of an area so that moved lines can be found by their hash, matches()
 * checks a translation pixel by pixel and scores() counts how well each of many translations
 * explains a sample of pixels, spread() measures how far an area's colours stray from their
 * mean, recoloured() and one_fill() tell how changed colours map to new ones, edges() counts
 * the strong and faint edges of two areas and colours() counts an area's colours. All release
 * the GIL. This file holds the module, its method table and the image check; the methods are
 * in _analysis_motion.c (blur, motion_residual), _analysis_envelope.c (envelope, flips, ranges,
 * fits), _analysis_edges.c (straight_run), _analysis_moves.c (signatures, matches, scores),
 * _analysis_stats.c (spread) and _analysis_colours.c (recoloured, one_fill, edges, colours).
 *
 * This module is built apart from _native so that its sums may be reassociated (and so
 * vectorised): nothing here has to reproduce another program's rounding.
 */
#include "_analysis.h"

int vfa_get_pixels(PyObject *obj, Py_buffer *view, pixels_t *im, const char *name) {
    if (get_uint8_image(obj, view, name) < 0) return -1;
    im->data = view->buf;
    im->stride = view->strides[0];
    im->channels = (int)view->shape[2];
    return 0;
}

int vfa_get_pair(PyObject *a_obj, PyObject *b_obj, Py_buffer *va, Py_buffer *vb, pixels_t *a,
                 pixels_t *b) {
    if (vfa_get_pixels(a_obj, va, a, "a") < 0) return -1;
    if (vfa_get_pixels(b_obj, vb, b, "b") < 0) {
        PyBuffer_Release(va);
        return -1;
    }
    if (va->shape[0] != vb->shape[0] || va->shape[1] != vb->shape[1]) {
        PyErr_SetString(PyExc_ValueError, "a and b must be images of one width and height");
        PyBuffer_Release(vb);
        PyBuffer_Release(va);
        return -1;
    }
    return 0;
}

int vfa_check_area(const Py_buffer *view, Py_ssize_t x, Py_ssize_t y, Py_ssize_t w, Py_ssize_t h) {
    if (x < 0 || y < 0 || w < 1 || h < 1 || x + w > view->shape[1] || y + h > view->shape[0]) {
        PyErr_SetString(PyExc_ValueError, "the area is empty or lies outside the image");
        return -1;
    }
    return 0;
}

static PyMethodDef methods[] = {
    {"blur", vfa_blur, METH_VARARGS, vfa_blur_doc},
    {"motion_residual", vfa_motion_residual, METH_VARARGS, vfa_motion_residual_doc},
    {"envelope", vfa_envelope, METH_VARARGS, vfa_envelope_doc},
    {"flips", vfa_flips, METH_VARARGS, vfa_flips_doc},
    {"fits", vfa_fits, METH_VARARGS, vfa_fits_doc},
    {"ranges", vfa_ranges, METH_VARARGS, vfa_ranges_doc},
    {"spread", vfa_spread, METH_VARARGS, vfa_spread_doc},
    {"signatures", vfa_signatures, METH_VARARGS, vfa_signatures_doc},
    {"matches", vfa_matches, METH_VARARGS, vfa_matches_doc},
    {"scores", vfa_scores, METH_VARARGS, vfa_scores_doc},
    {"straight_run", vfa_straight_run, METH_VARARGS, vfa_straight_run_doc},
    {"recoloured", vfa_recoloured, METH_VARARGS, vfa_recoloured_doc},
    {"one_fill", vfa_one_fill, METH_VARARGS, vfa_one_fill_doc},
    {"edges", vfa_edges, METH_VARARGS, vfa_edges_doc},
    {"colours", vfa_colours, METH_VARARGS, vfa_colours_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_analysis", "Inner loops of the change analysis.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__analysis(void) { return PyModule_Create(&module); }
