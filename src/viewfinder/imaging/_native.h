/*
 * What the files of the _native extension share: the pixel labels and palette indexes, the
 * image view and buffer checks, and the methods that _native.c's module table lists. Symbols
 * shared between files carry the vfn_ prefix so that they cannot clash with a library's.
 */
#ifndef VIEWFINDER_NATIVE_H
#define VIEWFINDER_NATIVE_H

#include "_buffers.h"

#include <stdint.h>

/* Per-pixel labels written by classify() and read by render_diff() and regions(). */
enum {
    LABEL_SAME = 0,    /* identical, or not compared */
    LABEL_CHANGED = 1, /* colour delta over the threshold, candidate not darker */
    LABEL_DARKER = 2,  /* colour delta over the threshold, candidate darker */
    LABEL_AA = 3,      /* over the threshold but anti-aliasing: not counted */
    LABEL_SUBTLE = 4,  /* bytes differ, colour delta within the threshold */
    LABEL_SIZE = 5,    /* outside one of the two images */
    LABEL_MASKED = 6,  /* inside a mask: neither compared nor counted */
    LABEL_MOVED = 7,   /* changed, but explained as content that moved */
    LABEL_NOISE = 8,   /* changed, but explained as rendering noise */
    LABEL_COUNT = 9
};

/* Palette indexes of the diff image; the palette itself is built in Python. */
enum {
    PAL_GRAYS = 32,
    PAL_CHANGED = 32,
    PAL_SIZE = 33,
    PAL_MASKED = 34,
    PAL_MOVED = 35,
    PAL_NOISE = 36
};

typedef struct {
    const uint8_t *data;
    Py_ssize_t stride; /* bytes from one row to the next */
} image_t;

/* A uint8 image of shape (height, width, 3 or 4) with contiguous rows (see get_uint8_image),
 * viewed as `im`, or ValueError naming it and -1. */
int vfn_get_image(PyObject *obj, Py_buffer *view, image_t *im, int *channels, const char *name);
/* A 2-D uint8 array with contiguous rows, writable if asked, or ValueError naming it and -1. */
int vfn_get_plane(PyObject *obj, Py_buffer *view, int writable, const char *name);

/* A method's docstring, defined beside the method for the module table. */
#define VFN_DOC(name, text) const char name[] = PyDoc_STR(text)

/* The methods: classify (_native_classify.c), unfilter (_native_png.c), render_diff
 * (_native_diff.c) and regions (_native_regions.c). */
PyObject *vfn_classify(PyObject *self, PyObject *args);
PyObject *vfn_unfilter(PyObject *self, PyObject *args);
PyObject *vfn_render_diff(PyObject *self, PyObject *args);
PyObject *vfn_regions(PyObject *self, PyObject *args);
extern const char vfn_classify_doc[], vfn_unfilter_doc[], vfn_render_diff_doc[], vfn_regions_doc[];

#endif
