/*
 * Inner loops of the change analysis (the analysis package holds the method and its reasons).
 *
 * is_noise() is the noise test of one region and noise_run() of regions in turn, straight from the
 * label plane, built from the kernels below. blur() smooths an area of an image, motion_residual()
 * estimates the sub-pixel motion of a window of two blurred images (one Lucas-Kanade step) and
 * measures what the motion leaves unexplained inside a box, envelope() checks that changed pixels
 * stay within their neighbours' range of colours, flips() counts those that crossed it, ranges()
 * finds each pixel's neighbourhood range and tile_shifts() finds glyphs displaced a pixel or two
 * against those ranges, straight_run() finds a box's edge among changed pixels, ink_bounds() where
 * each row's content starts and ends, votes() finds the offsets at which a region's rows or columns
 * reappear, matches() checks a translation pixel by pixel, rank() picks the translation that best
 * explains a sample of pixels, carried() tells how much of what a move carried covers content that
 * stayed, frame_colour() finds what a region sits on, spread() measures how far an area's colours
 * stray from their mean, pixels() lists a mask's set pixels, recoloured() and one_fill() tell how
 * changed colours map to new ones, edges() counts the strong and faint edges of two areas and
 * colours() counts an area's colours; grey_pair(), cross_power() and peaks() are phase
 * correlation's steps around its transforms; glyph_tiles() is the glyph test, tile_shifts() and
 * tile_residuals() over a region's tiles. All release the GIL.
 * This file holds the module, its method table and the image check; the methods are in
 * _analysis_noise.c (is_noise, noise_run), _analysis_motion.c (blur, motion_residual,
 * tile_residuals), _analysis_envelope.c (envelope, flips, ranges, tile_shifts), _analysis_edges.c
 * (straight_run, ink_bounds), _analysis_votes.c (votes), _analysis_moves.c (matches, rank, carried,
 * frame_colour), _analysis_stats.c (spread, pixels), _analysis_colours.c (recoloured, one_fill,
 * edges, colours), _analysis_phase.c (grey_pair, cross_power, peaks) and _analysis_glyphs.c
 * (glyph_tiles).
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

int vfa_get_coords(PyObject *obj, Py_buffer *view, int flags, const char *name) {
    if (PyObject_GetBuffer(obj, view, flags | PyBUF_FORMAT) < 0) return -1;
    const char *format = view->format ? view->format : "B";
    if (view->ndim != 1 || view->itemsize != sizeof(coord_t) || view->strides[0] % 4 != 0 ||
        (format[0] != 'i' && format[0] != 'l')) {
        PyErr_Format(PyExc_ValueError, "%s must be a 1-D%s int32 array", name,
                     (flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS ? " contiguous" : "");
        PyBuffer_Release(view);
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
    {"is_noise", vfa_is_noise, METH_VARARGS, vfa_is_noise_doc},
    {"noise_run", vfa_noise_run, METH_VARARGS, vfa_noise_run_doc},
    {"blur", vfa_blur, METH_VARARGS, vfa_blur_doc},
    {"motion_residual", vfa_motion_residual, METH_VARARGS, vfa_motion_residual_doc},
    {"tile_residuals", vfa_tile_residuals, METH_VARARGS, vfa_tile_residuals_doc},
    {"envelope", vfa_envelope, METH_VARARGS, vfa_envelope_doc},
    {"flips", vfa_flips, METH_VARARGS, vfa_flips_doc},
    {"tile_shifts", vfa_tile_shifts, METH_VARARGS, vfa_tile_shifts_doc},
    {"ranges", vfa_ranges, METH_VARARGS, vfa_ranges_doc},
    {"spread", vfa_spread, METH_VARARGS, vfa_spread_doc},
    {"pixels", vfa_pixels, METH_VARARGS, vfa_pixels_doc},
    {"votes", vfa_votes, METH_VARARGS, vfa_votes_doc},
    {"matches", vfa_matches, METH_VARARGS, vfa_matches_doc},
    {"rank", vfa_rank, METH_VARARGS, vfa_rank_doc},
    {"carried", vfa_carried, METH_VARARGS, vfa_carried_doc},
    {"frame_colour", vfa_frame_colour, METH_VARARGS, vfa_frame_colour_doc},
    {"straight_run", vfa_straight_run, METH_VARARGS, vfa_straight_run_doc},
    {"ink_bounds", vfa_ink_bounds, METH_VARARGS, vfa_ink_bounds_doc},
    {"recoloured", vfa_recoloured, METH_VARARGS, vfa_recoloured_doc},
    {"one_fill", vfa_one_fill, METH_VARARGS, vfa_one_fill_doc},
    {"edges", vfa_edges, METH_VARARGS, vfa_edges_doc},
    {"colours", vfa_colours, METH_VARARGS, vfa_colours_doc},
    {"grey_pair", vfa_grey_pair, METH_VARARGS, vfa_grey_pair_doc},
    {"cross_power", vfa_cross_power, METH_VARARGS, vfa_cross_power_doc},
    {"peaks", vfa_peaks, METH_VARARGS, vfa_peaks_doc},
    {"glyph_tiles", vfa_glyph_tiles, METH_VARARGS, vfa_glyph_tiles_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_analysis", "Inner loops of the change analysis.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__analysis(void) { return PyModule_Create(&module); }
