/* The parts of phase correlation around numpy's transforms: grey_pair() samples two images'
 * windows as zero-mean grey planes, cross_power() normalises their cross-power spectrum and
 * peaks() finds the highest values of the correlation. Each replaces several numpy calls whose
 * overhead was most of a small window's correlation (and argpartition most of a large one's). */
#include "_analysis.h"

#include <math.h>

/* A C-contiguous array of `ndim` dimensions and items of `itemsize` bytes, writable if asked,
 * or ValueError naming it and -1. */
static int get_array(PyObject *obj, Py_buffer *view, int ndim, Py_ssize_t itemsize, int writable,
                     const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (view->ndim != ndim || view->itemsize != itemsize) {
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous %d-D array of %zd-byte items",
                     name, ndim, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The grey (r + g + b) of every step-th pixel of `im` from (x0, y0), rows x cols of them, less
 * their mean. The sum is of integers below 2^53, so exact in any order: the mean is the one
 * numpy finds. */
static void grey_plane(const pixels_t *im, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t step,
                       Py_ssize_t rows, Py_ssize_t cols, double *out) {
    double total = 0.0;
    for (Py_ssize_t i = 0; i < rows; i++) {
        const uint8_t *p = im->data + (y0 + i * step) * im->stride + x0 * im->channels;
        const Py_ssize_t jump = step * im->channels;
        double *row = out + i * cols;
        for (Py_ssize_t j = 0; j < cols; j++, p += jump) {
            row[j] = (double)(p[0] + p[1] + p[2]);
            total += row[j];
        }
    }
    const double mean = total / (double)(rows * cols);
    for (Py_ssize_t k = 0; k < rows * cols; k++) out[k] -= mean;
}

PyObject *vfa_grey_pair(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *out_obj;
    Py_ssize_t x0, y0, step;
    if (!PyArg_ParseTuple(args, "OOnnnO", &a_obj, &b_obj, &x0, &y0, &step, &out_obj)) return NULL;
    Py_buffer va, vb, vo;
    pixels_t a, b;
    if (vfa_get_pair(a_obj, b_obj, &va, &vb, &a, &b) < 0) return NULL;
    PyObject *result = NULL;
    if (get_array(out_obj, &vo, 3, sizeof(double), 1, "out") < 0) goto release_pair;
    const Py_ssize_t rows = vo.shape[1], cols = vo.shape[2];
    if (vo.shape[0] != 2 || rows < 1 || cols < 1 || step < 1) {
        PyErr_SetString(PyExc_ValueError, "out must have the shape (2, rows, cols), step >= 1");
        goto release;
    }
    if (vfa_check_area(&va, x0, y0, (cols - 1) * step + 1, (rows - 1) * step + 1) < 0)
        goto release;
    double *out = vo.buf;
    Py_BEGIN_ALLOW_THREADS
    grey_plane(&a, x0, y0, step, rows, cols, out);
    grey_plane(&b, x0, y0, step, rows, cols, out + rows * cols);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
release:
    PyBuffer_Release(&vo);
release_pair:
    PyBuffer_Release(&vb);
    PyBuffer_Release(&va);
    return result;
}

VFA_DOC(vfa_grey_pair_doc,
        "grey_pair(a, b, x0, y0, step, out) -> None\n\n"
        "Write into out, float64 of shape (2, rows, cols), the grey (r + g + b) of a's and of\n"
        "b's pixels at (x0 + j * step, y0 + i * step), each plane less its mean.");

PyObject *vfa_cross_power(PyObject *self, PyObject *args) {
    PyObject *spectra_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OO", &spectra_obj, &out_obj)) return NULL;
    Py_buffer vs, vo;
    if (get_array(spectra_obj, &vs, 3, 2 * sizeof(double), 0, "spectra") < 0) return NULL;
    PyObject *result = NULL;
    if (get_array(out_obj, &vo, 2, 2 * sizeof(double), 1, "out") < 0) goto release_spectra;
    if (vs.shape[0] != 2 || vo.shape[0] != vs.shape[1] || vo.shape[1] != vs.shape[2]) {
        PyErr_SetString(PyExc_ValueError,
                        "spectra must have the shape (2, rows, cols) and out (rows, cols)");
        goto release;
    }
    const Py_ssize_t n = vo.shape[0] * vo.shape[1];
    const double *fa = vs.buf, *fb = fa + 2 * n;
    double *out = vo.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n; k++) {
        const double ar = fa[2 * k], ai = fa[2 * k + 1], br = fb[2 * k], bi = fb[2 * k + 1];
        const double re = br * ar + bi * ai, im = bi * ar - br * ai;
        /* Not hypot(), which guards against overflow at ten times the cost: spectra of grey
         * levels below 766 over at most 2^16 samples stay far from it. */
        const double scale = sqrt(re * re + im * im) + 1e-9;
        out[2 * k] = re / scale;
        out[2 * k + 1] = im / scale;
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
release:
    PyBuffer_Release(&vo);
release_spectra:
    PyBuffer_Release(&vs);
    return result;
}

VFA_DOC(vfa_cross_power_doc,
        "cross_power(spectra, out) -> None\n\n"
        "Write into out, complex128 of shape (rows, cols), the normalised cross-power spectrum\n"
        "of the two transforms in spectra (shape (2, rows, cols)): S1 conj(S0) / (|S1 conj(S0)|\n"
        "+ 1e-9), whose inverse transform peaks at the translation from the first to the second.");

#define MAX_PEAKS 16

PyObject *vfa_peaks(PyObject *self, PyObject *args) {
    PyObject *corr_obj;
    Py_ssize_t want;
    if (!PyArg_ParseTuple(args, "On", &corr_obj, &want)) return NULL;
    if (want < 0 || want > MAX_PEAKS) {
        PyErr_Format(PyExc_ValueError, "count must be from 0 to %d", MAX_PEAKS);
        return NULL;
    }
    Py_buffer vc;
    if (get_array(corr_obj, &vc, 2, sizeof(double), 0, "corr") < 0) return NULL;
    const Py_ssize_t cols = vc.shape[1], n = vc.shape[0] * cols;
    const double *corr = vc.buf;
    Py_ssize_t at[MAX_PEAKS], kept = 0;
    Py_BEGIN_ALLOW_THREADS
    /* Index 0 is no motion, what unchanged surroundings vote for: never a peak. The kept values
     * stay sorted, highest first; a value ties lose to those found before it. */
    for (Py_ssize_t k = 1; k < n; k++) {
        const double v = corr[k];
        if (kept == want && (want == 0 || !(v > corr[at[kept - 1]]))) continue;
        Py_ssize_t i = kept < want ? kept++ : kept - 1;
        while (i > 0 && v > corr[at[i - 1]]) {
            at[i] = at[i - 1];
            i--;
        }
        at[i] = k;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vc);
    PyObject *result = PyList_New(kept);
    if (result == NULL) return NULL;
    for (Py_ssize_t i = 0; i < kept; i++) {
        PyObject *item = Py_BuildValue("(nn)", at[i] / cols, at[i] % cols);
        if (item == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyList_SET_ITEM(result, i, item);
    }
    return result;
}

VFA_DOC(vfa_peaks_doc,
        "peaks(corr, count) -> list[tuple[int, int]]\n\n"
        "The (row, col) of the count highest values of the float64 plane corr, highest first\n"
        "(of equal values the first in row order), leaving out (0, 0).");
