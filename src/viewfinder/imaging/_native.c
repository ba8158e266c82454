/*
 * Inner loops of the comparison engine: the _native extension's module, its method table and
 * the buffer checks its methods share. The methods are in _native_classify.c (labelling the
 * differing pixels, as pixelmatch), _native_png.c (PNG row filters), _native_diff.c (the diff
 * image) and _native_regions.c (clustering changed pixels into regions).
 *
 * Each function takes numpy arrays through the buffer protocol and releases the GIL while it
 * runs, so comparisons can proceed in parallel threads. The Python side validates shapes and
 * options; the checks here only guard memory safety.
 */
#include "_native.h"

int vfn_get_image(PyObject *obj, Py_buffer *view, image_t *im, int *channels, const char *name) {
    if (get_uint8_image(obj, view, name) < 0) return -1;
    im->data = view->buf;
    im->stride = view->strides[0];
    *channels = (int)view->shape[2];
    return 0;
}

int vfn_get_plane(PyObject *obj, Py_buffer *view, int writable, const char *name) {
    int flags = PyBUF_STRIDED_RO | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    if (view->ndim != 2 || view->itemsize != 1 || view->strides[1] != 1 || view->strides[0] < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be a 2-D uint8 array with contiguous rows", name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* ---- module -------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"classify", vfn_classify, METH_VARARGS, vfn_classify_doc},
    {"unfilter", vfn_unfilter, METH_VARARGS, vfn_unfilter_doc},
    {"render_diff", vfn_render_diff, METH_VARARGS, vfn_render_diff_doc},
    {"regions", vfn_regions, METH_VARARGS, vfn_regions_doc},
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
