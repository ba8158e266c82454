/* spread(): how far an area's colours stray from their mean, channel by channel. */
#include "_analysis.h"

#include <math.h>

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
