/* Buffer checks both C extensions share, and how their vector loops are built. */
#ifndef VIEWFINDER_BUFFERS_H
#define VIEWFINDER_BUFFERS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Get a buffer that is a uint8 image of shape (height, width, 3 or 4) with contiguous rows
 * (a row stride of any positive size), or set ValueError naming it and return -1. */
static inline int get_uint8_image(PyObject *obj, Py_buffer *view, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_STRIDED_RO | PyBUF_FORMAT) < 0) return -1;
    if (view->ndim != 3 || view->itemsize != 1 || (view->shape[2] != 3 && view->shape[2] != 4) ||
        view->strides[2] != 1 || view->strides[1] != view->shape[2] || view->strides[0] < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be a uint8 array of shape (height, width, 3 or 4) with contiguous rows",
                     name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* A helper whose constant arguments (a channel count) specialise the loop it is inlined into. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* Loops that the compiler vectorizes well only with SSSE3's byte shuffles or wider (three-byte
 * RGB pixels) are built twice, for AVX2 and for the x86-64 baseline, and the loader picks one for
 * this CPU. Elsewhere (no ifunc) they are built once. Only loops whose every result is exact
 * (integers, or one rounding per value) qualify: both builds must give the same numbers. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__)
#define VF_CLONES __attribute__((target_clones("avx2", "default")))
/* Whether the AVX2 build of such loops runs here, for one whose best form differs by build. */
static inline int vf_has_avx2(void) { return __builtin_cpu_supports("avx2"); }
#else
#define VF_CLONES
static inline int vf_has_avx2(void) { return 0; }
#endif

#endif
