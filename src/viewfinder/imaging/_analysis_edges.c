/* straight_run(): whether a mask holds a straight run of set pixels, the mark of a box's edge;
 * ink_bounds(): where each row of an area's content starts and ends. */
#include "_analysis.h"

#include <stdlib.h>
#include <string.h>

VFA_DOC(vfa_straight_run_doc,
        "straight_run(mask, length, unset=b'\\0') -> bool\n\n"
        "Whether the 2-D bool (or uint8) array has `length` or more consecutive set values along\n"
        "a row or along a column, a value being set unless it is one of the bytes of unset (a\n"
        "label plane's quiet labels). One pass over the mask, counting runs down the columns as\n"
        "it goes along the rows; it stops at the first run long enough.");

PyObject *vfa_straight_run(PyObject *self, PyObject *args) {
    PyObject *mask_obj;
    Py_ssize_t length;
    static const char zero[1] = {0};
    const char *unset = zero; /* by default only 0 is unset */
    Py_ssize_t unset_count = 1;
    if (!PyArg_ParseTuple(args, "On|y#", &mask_obj, &length, &unset, &unset_count)) return NULL;
    uint8_t set[256];
    memset(set, 1, sizeof set);
    for (Py_ssize_t i = 0; i < unset_count; i++) set[(uint8_t)unset[i]] = 0;
    Py_buffer view;
    if (PyObject_GetBuffer(mask_obj, &view, PyBUF_STRIDED_RO) < 0) return NULL;
    if (view.ndim != 2 || view.itemsize != 1) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "mask must be a 2-D bool or uint8 array");
        return NULL;
    }
    const Py_ssize_t h = view.shape[0], w = view.shape[1];
    const Py_ssize_t row_step = view.strides[0], col_step = view.strides[1];
    if (length <= 0) {
        PyBuffer_Release(&view);
        return PyBool_FromLong(1);
    }
    Py_ssize_t *down = calloc((size_t)(w > 0 ? w : 1), sizeof(Py_ssize_t));
    if (down == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    int found = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t y = 0; y < h && !found; y++) {
        const uint8_t *row = (const uint8_t *)view.buf + y * row_step;
        Py_ssize_t along = 0;
        for (Py_ssize_t x = 0; x < w; x++) {
            if (set[row[x * col_step]]) {
                along++;
                down[x]++;
                if (along >= length || down[x] >= length) {
                    found = 1;
                    break;
                }
            } else {
                along = 0;
                down[x] = 0;
            }
        }
    }
    Py_END_ALLOW_THREADS
    free(down);
    PyBuffer_Release(&view);
    return PyBool_FromLong(found);
}

VFA_DOC(vfa_ink_bounds_doc,
        "ink_bounds(image, x, y, w, h, colour, ink, left, right) -> int\n\n"
        "For each row of the area [x, x + w) x [y, y + h) of a uint8 image, the first and the\n"
        "last column (area-relative) whose pixel lies more than `ink` levels from the (r, g, b)\n"
        "colour in some channel: written to the 1-D int32 arrays left and right, h long, -1 on a\n"
        "row with no such pixel. Returns how many rows have one. Each row is read from its ends\n"
        "inwards, up to its first and last such pixel.");

/* A pixel of content: some channel lies outside [lo, hi]. */
static inline int inked(const uint8_t *p, const int lo[3], const int hi[3]) {
    return p[0] < lo[0] || p[0] > hi[0] || p[1] < lo[1] || p[1] > hi[1] || p[2] < lo[2] ||
           p[2] > hi[2];
}

PyObject *vfa_ink_bounds(PyObject *self, PyObject *args) {
    PyObject *image_obj, *left_obj, *right_obj;
    Py_ssize_t x, y, w, h;
    int colour[3], ink;
    if (!PyArg_ParseTuple(args, "Onnnn(iii)iOO", &image_obj, &x, &y, &w, &h, &colour[0],
                          &colour[1], &colour[2], &ink, &left_obj, &right_obj))
        return NULL;
    Py_buffer vi, vl, vr;
    pixels_t im;
    if (vfa_get_pixels(image_obj, &vi, &im, "image") < 0) return NULL;
    if (vfa_check_area(&vi, x, y, w, h) < 0) goto fail_image;
    if (vfa_get_coords(left_obj, &vl, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE, "left") < 0)
        goto fail_image;
    if (vfa_get_coords(right_obj, &vr, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE, "right") < 0)
        goto fail_left;
    if (vl.shape[0] != h || vr.shape[0] != h) {
        PyErr_SetString(PyExc_ValueError, "left and right must hold one value for each row");
        goto fail_right;
    }
    int lo[3], hi[3];
    for (int c = 0; c < 3; c++) {
        lo[c] = colour[c] - ink;
        hi[c] = colour[c] + ink;
    }
    coord_t *left = vl.buf, *right = vr.buf;
    const int ch = im.channels;
    Py_ssize_t found = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t row = 0; row < h; row++) {
        const uint8_t *p = im.data + (y + row) * im.stride + x * ch;
        Py_ssize_t first = 0, last = w - 1;
        while (first < w && !inked(p + first * ch, lo, hi)) first++;
        if (first == w) {
            left[row] = right[row] = -1;
            continue;
        }
        while (!inked(p + last * ch, lo, hi)) last--;
        left[row] = (coord_t)first;
        right[row] = (coord_t)last;
        found++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vr);
    PyBuffer_Release(&vl);
    PyBuffer_Release(&vi);
    return PyLong_FromSsize_t(found);
fail_right:
    PyBuffer_Release(&vr);
fail_left:
    PyBuffer_Release(&vl);
fail_image:
    PyBuffer_Release(&vi);
    return NULL;
}
