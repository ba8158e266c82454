/* spread(): how far an area's colours stray from their mean; pixels(): where a mask is set. */
#include "_analysis.h"

#include <math.h>
#include <string.h>

PyObject *vfa_spread(PyObject *self, PyObject *args) {
    PyObject *src_obj;
    Py_ssize_t x0, y0, w, h;
    if (!PyArg_ParseTuple(args, "Onnnn", &src_obj, &x0, &y0, &w, &h)) return NULL;
    Py_buffer vs;
    pixels_t src;
    if (vfa_get_pixels(src_obj, &vs, &src, "src") < 0) return NULL;
    PyObject *result = NULL;
    if (vfa_check_area(&vs, x0, y0, w, h) < 0) goto done;
    /* Sums in integers: exact for any area an image can have (255^2 * 2^40 fits in 64 bits). */
    uint64_t sum[3] = {0, 0, 0}, squares[3] = {0, 0, 0};
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t y = y0; y < y0 + h; y++) {
        const uint8_t *row = src.data + y * src.stride + x0 * src.channels;
        uint64_t s[3] = {0, 0, 0}, q[3] = {0, 0, 0};
        for (Py_ssize_t i = 0; i < w; i++) {
            const uint8_t *p = row + i * src.channels;
            for (int c = 0; c < 3; c++) {
                s[c] += p[c];
                q[c] += (uint32_t)p[c] * p[c];
            }
        }
        for (int c = 0; c < 3; c++) {
            sum[c] += s[c];
            squares[c] += q[c];
        }
    }
    Py_END_ALLOW_THREADS
    const double n = (double)w * (double)h;
    double widest = 0.0;
    for (int c = 0; c < 3; c++) {
        const double mean = (double)sum[c] / n;
        const double variance = (double)squares[c] / n - mean * mean;
        const double deviation = variance > 0 ? sqrt(variance) : 0.0;
        widest = deviation > widest ? deviation : widest;
    }
    result = PyFloat_FromDouble(widest);
done:
    PyBuffer_Release(&vs);
    return result;
}

VFA_DOC(vfa_spread_doc,
        "spread(src, x, y, w, h) -> float\n\n"
        "The largest standard deviation of the red, green and blue values of src over the\n"
        "area [x, x + w) x [y, y + h).");

/* ---- pixels -------------------------------------------------------------------------------- */

PyObject *vfa_pixels(PyObject *self, PyObject *args) {
    PyObject *mask_obj, *ys_obj, *xs_obj;
    if (!PyArg_ParseTuple(args, "OOO", &mask_obj, &ys_obj, &xs_obj)) return NULL;
    Py_buffer vm, vy, vx;
    if (PyObject_GetBuffer(mask_obj, &vm, PyBUF_STRIDED_RO) < 0) return NULL;
    PyObject *result = NULL;
    const int writable = PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS;
    if (vfa_get_coords(ys_obj, &vy, writable, "ys") < 0) goto fail_m;
    if (vfa_get_coords(xs_obj, &vx, writable, "xs") < 0) goto fail_y;
    if (vm.ndim != 2 || vm.itemsize != 1 || vm.strides[1] != 1 || vm.strides[0] < 0) {
        PyErr_SetString(PyExc_ValueError, "mask must be a 2-D bool array with contiguous rows");
        goto done;
    }
    if (vy.len != vx.len) {
        PyErr_SetString(PyExc_ValueError, "ys and xs must have one length");
        goto done;
    }
    const Py_ssize_t h = vm.shape[0], w = vm.shape[1], room = vy.len / (Py_ssize_t)sizeof(coord_t);
    coord_t *ys = vy.buf, *xs = vx.buf;
    Py_ssize_t found = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t y = 0; y < h && found <= room; y++) {
        const uint8_t *row = (const uint8_t *)vm.buf + y * vm.strides[0];
        Py_ssize_t x = 0;
        for (; x < w; x++) {
            /* Eight unset pixels at a time: most of a region's box did not change. */
            if (!(x & 7) && x + 8 <= w) {
                uint64_t word;
                memcpy(&word, row + x, 8);
                if (!word) {
                    x += 7;
                    continue;
                }
            }
            if (!row[x]) continue;
            if (found < room) {
                ys[found] = (coord_t)y;
                xs[found] = (coord_t)x;
            }
            found++;
        }
    }
    Py_END_ALLOW_THREADS
    if (found != room) {
        PyErr_Format(PyExc_ValueError, "the mask has %zd set pixels, not %zd", found, room);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&vx);
fail_y:
    PyBuffer_Release(&vy);
fail_m:
    PyBuffer_Release(&vm);
    return result;
}

VFA_DOC(vfa_pixels_doc,
        "pixels(mask, ys, xs)\n\n"
        "Write the rows and columns of the set pixels of mask (2-D bool, rows contiguous), in\n"
        "row order, into ys and xs (int32, as long as the mask has set pixels).");
