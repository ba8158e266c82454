/* straight_run(): whether a mask holds a straight run of set pixels, the mark of a box's edge. */
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
