/* Changed pixels against their neighbours' range of colours: envelope() (within it), flips()
 * (crossed it), ranges() (each pixel's range, for tile_shifts()) and tile_shifts() (within it
 * once displaced a pixel or two, tile by tile). */
#include "_analysis.h"

#include <stdlib.h>
#include <string.h>

/* Every channel of p lies within [lo - 2, hi + 2] of the 3x3 neighbourhood of (x, y) in q. */
static int within(const pixels_t *q, const uint8_t *p, Py_ssize_t x, Py_ssize_t y, Py_ssize_t w,
                  Py_ssize_t h) {
    int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
    for (int dy = -1; dy <= 1; dy++) {
        const uint8_t *row = q->data + clamp(y + dy, 0, h - 1) * q->stride;
        for (int dx = -1; dx <= 1; dx++) {
            const uint8_t *n = row + clamp(x + dx, 0, w - 1) * q->channels;
            for (int ch = 0; ch < 3; ch++) {
                if (n[ch] < lo[ch]) lo[ch] = n[ch];
                if (n[ch] > hi[ch]) hi[ch] = n[ch];
            }
        }
    }
    for (int ch = 0; ch < 3; ch++)
        if (p[ch] + 2 < lo[ch] || p[ch] > hi[ch] + 2) return 0;
    return 1;
}

int vfa_get_placed(PyObject *a_obj, PyObject *b_obj, PyObject *mask_obj, Py_ssize_t x,
                   Py_ssize_t y, placed_t *p) {
    if (vfa_get_pair(a_obj, b_obj, &p->va, &p->vb, &p->a, &p->b) < 0) return -1;
    if (PyObject_GetBuffer(mask_obj, &p->vm, PyBUF_STRIDED_RO) < 0) goto fail_b;
    p->w = p->va.shape[1];
    p->h = p->va.shape[0];
    const Py_buffer *vm = &p->vm;
    if (vm->ndim != 2 || vm->itemsize != 1 || vm->strides[1] != 1 || vm->strides[0] < 0) {
        PyErr_SetString(PyExc_ValueError, "mask must be a 2-D bool array with contiguous rows");
        goto fail_m;
    }
    if (x < 0 || y < 0 || x + vm->shape[1] > p->w || y + vm->shape[0] > p->h) {
        PyErr_SetString(PyExc_ValueError, "the mask lies outside the images");
        goto fail_m;
    }
    return 0;
fail_m:
    PyBuffer_Release(&p->vm);
fail_b:
    PyBuffer_Release(&p->vb);
    PyBuffer_Release(&p->va);
    return -1;
}

void vfa_release_placed(placed_t *p) {
    PyBuffer_Release(&p->vm);
    PyBuffer_Release(&p->vb);
    PyBuffer_Release(&p->va);
}

int vfa_envelope_holds(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                       const mask_t *m, int skip_edges) {
    for (Py_ssize_t r = 0; r < m->height; r++) {
        const uint8_t *row = m->data + r * m->stride;
        const Py_ssize_t y = m->y + r;
        if (skip_edges && (y < 2 || y >= h - 2)) continue;
        for (Py_ssize_t i = 0; i < m->width; i++) {
            if (!row[i]) continue;
            const Py_ssize_t x = m->x + i;
            if (skip_edges && (x < 2 || x >= w - 2)) continue;
            const uint8_t *pa = a->data + y * a->stride + x * a->channels;
            const uint8_t *pb = b->data + y * b->stride + x * b->channels;
            if (!within(a, pb, x, y, w, h) && !within(b, pa, x, y, w, h)) return 0;
        }
    }
    return 1;
}

mask_t vfa_placed_mask(const placed_t *p, Py_ssize_t x, Py_ssize_t y) {
    return (mask_t){p->vm.buf, p->vm.strides[0], p->vm.shape[1], p->vm.shape[0], x, y};
}

PyObject *vfa_envelope(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj;
    Py_ssize_t bx, by;
    int skip_edges;
    if (!PyArg_ParseTuple(args, "OOOnnp", &a_obj, &b_obj, &mask_obj, &bx, &by, &skip_edges))
        return NULL;
    placed_t p;
    if (vfa_get_placed(a_obj, b_obj, mask_obj, bx, by, &p) < 0) return NULL;
    const mask_t m = vfa_placed_mask(&p, bx, by);
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = vfa_envelope_holds(&p.a, &p.b, p.w, p.h, &m, skip_edges);
    Py_END_ALLOW_THREADS
    vfa_release_placed(&p);
    return PyBool_FromLong(ok);
}

VFA_DOC(vfa_envelope_doc,
             "envelope(a, b, mask, x, y, skip_edges) -> bool\n\n"
             "Whether every pixel set in mask (placed at (x, y)) has, in one image or the other,\n"
             "a colour within 2 levels of the range of the other image's 3x3 neighbourhood;\n"
             "skip_edges leaves out pixels within 2 px of the image's border.");

static inline float luma(const uint8_t *p) { return 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2]; }

Py_ssize_t vfa_count_flips(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                           const mask_t *m, float share, float contrast, float plain,
                           Py_ssize_t need) {
    Py_ssize_t found = 0;
    for (Py_ssize_t r = 0; found < need && r < m->height; r++) {
        const uint8_t *row_m = m->data + r * m->stride;
        const Py_ssize_t y = m->y + r;
        for (Py_ssize_t i = 0; found < need && i < m->width; i++) {
            if (!row_m[i]) continue;
            const Py_ssize_t x = m->x + i;
            float lo = 1e9f, hi = -1e9f;
            for (int dy = -1; dy <= 1; dy++) {
                const uint8_t *row = a->data + clamp(y + dy, 0, h - 1) * a->stride;
                for (int dx = -1; dx <= 1; dx++) {
                    const float v = luma(row + clamp(x + dx, 0, w - 1) * a->channels);
                    lo = v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                }
            }
            const float span = hi - lo;
            const float la = luma(a->data + y * a->stride + x * a->channels);
            const float lb = luma(b->data + y * b->stride + x * b->channels);
            const float moved = lb > la ? lb - la : la - lb;
            /* Across most of a contrasty neighbourhood's range, or a stroke drawn on a plain
             * one: a change no re-rasterisation of the base's neighbourhood makes. (Not at
             * the image's own edges, where a sub-pixel motion uncovers what lay beyond.) */
            const int inner = x >= 2 && y >= 2 && x < w - 2 && y < h - 2;
            found += (span >= contrast && moved >= share * span) ||
                     (inner && moved >= plain && span * 2 < moved);
        }
    }
    return found;
}

PyObject *vfa_flips(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj;
    Py_ssize_t bx, by, need;
    double share, contrast, plain;
    if (!PyArg_ParseTuple(args, "OOOnndddn", &a_obj, &b_obj, &mask_obj, &bx, &by, &share,
                          &contrast, &plain, &need))
        return NULL;
    placed_t p;
    if (vfa_get_placed(a_obj, b_obj, mask_obj, bx, by, &p) < 0) return NULL;
    const mask_t m = vfa_placed_mask(&p, bx, by);
    Py_ssize_t found;
    Py_BEGIN_ALLOW_THREADS
    found = vfa_count_flips(&p.a, &p.b, p.w, p.h, &m, (float)share, (float)contrast, (float)plain,
                            need);
    Py_END_ALLOW_THREADS
    vfa_release_placed(&p);
    return PyLong_FromSsize_t(found);
}

VFA_DOC(vfa_flips_doc,
        "flips(a, b, mask, x, y, share, contrast, plain, need) -> int\n\n"
        "Count the pixels set in mask (placed at (x, y)) whose luma changed from a to b by at\n"
        "least share of the luma range of a's 3x3 neighbourhood, where that range is at least\n"
        "contrast, or (2 px or more inside the image) by at least plain and more than twice\n"
        "that range; counting stops at need.");

/* ---- fits ---------------------------------------------------------------------------------- */

/* An int16 array of shape (height, width, 3), C-contiguous, or ValueError naming it. */
static int get_area(PyObject *obj, Py_buffer *view, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view->ndim != 3 || view->itemsize != 2 || view->shape[2] != 3 || !view->format ||
        view->format[0] != 'h') {
        PyErr_Format(PyExc_ValueError, "%s must be a C-contiguous int16 array (height, width, 3)",
                     name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Every channel of p within [lo - tolerance, hi + tolerance]. */
static inline int inside(const int16_t *p, const int16_t *lo, const int16_t *hi, int tolerance) {
    for (int c = 0; c < 3; c++)
        if (p[c] < lo[c] - tolerance || p[c] > hi[c] + tolerance) return 0;
    return 1;
}

int vfa_ranges3(const int16_t *a, Py_ssize_t w, Py_ssize_t h, int16_t *lo, int16_t *hi) {
    /* Along each row first (edges repeated), into lo and hi; then down the columns, a row of
     * the row-wise ranges at a time, into the same arrays from a copy of the rows above. A row's
     * two end pixels are done apart, so that the run between them is one flat loop over its
     * values, which vectorises. */
    const Py_ssize_t n = w * 3;
    const size_t row_len = (size_t)w * 3;
    int16_t *prev = malloc(sizeof(int16_t) * 4 * (row_len ? row_len : 1));
    if (!prev) return -1;
    for (Py_ssize_t y = 0; y < h; y++) {
        const int16_t *row = a + y * n;
        int16_t *l = lo + y * n, *u = hi + y * n;
        if (w == 1) {
            memcpy(l, row, 3 * sizeof(int16_t));
            memcpy(u, row, 3 * sizeof(int16_t));
            continue;
        }
        for (int c = 0; c < 3; c++) {
            const int16_t first = row[c], second = row[3 + c];
            l[c] = first < second ? first : second;
            u[c] = first > second ? first : second;
            const int16_t last = row[n - 3 + c], before = row[n - 6 + c];
            l[n - 3 + c] = last < before ? last : before;
            u[n - 3 + c] = last > before ? last : before;
        }
        for (Py_ssize_t i = 3; i < n - 3; i++) {
            const int16_t left = row[i - 3], mid = row[i], right = row[i + 3];
            int16_t m = left < mid ? left : mid, k = left > mid ? left : mid;
            l[i] = right < m ? right : m;
            u[i] = right > k ? right : k;
        }
    }
    int16_t *prev_lo = prev, *prev_hi = prev + row_len, *cur_lo = prev + 2 * row_len,
            *cur_hi = prev + 3 * row_len;
    memcpy(prev_lo, lo, row_len * sizeof(int16_t));
    memcpy(prev_hi, hi, row_len * sizeof(int16_t));
    for (Py_ssize_t y = 0; y < h; y++) {
        int16_t *l = lo + y * row_len, *u = hi + y * row_len;
        const int16_t *nl = lo + (y < h - 1 ? y + 1 : y) * row_len;
        const int16_t *nu = hi + (y < h - 1 ? y + 1 : y) * row_len;
        memcpy(cur_lo, l, row_len * sizeof(int16_t));
        memcpy(cur_hi, u, row_len * sizeof(int16_t));
        for (size_t i = 0; i < row_len; i++) {
            int16_t m = cur_lo[i], k = cur_hi[i];
            if (prev_lo[i] < m) m = prev_lo[i];
            if (nl[i] < m) m = nl[i];
            if (prev_hi[i] > k) k = prev_hi[i];
            if (nu[i] > k) k = nu[i];
            l[i] = m;
            u[i] = k;
        }
        int16_t *swap = prev_lo;
        prev_lo = cur_lo;
        cur_lo = swap;
        swap = prev_hi;
        prev_hi = cur_hi;
        cur_hi = swap;
    }
    free(prev);
    return 0;
}

PyObject *vfa_ranges(PyObject *self, PyObject *args) {
    PyObject *area_obj, *lo_obj, *hi_obj;
    if (!PyArg_ParseTuple(args, "OOO", &area_obj, &lo_obj, &hi_obj)) return NULL;
    Py_buffer va, vl, vh;
    if (get_area(area_obj, &va, "area") < 0) return NULL;
    if (get_area(lo_obj, &vl, "lo") < 0) goto fail_a;
    if (get_area(hi_obj, &vh, "hi") < 0) goto fail_l;
    PyObject *result = NULL;
    const Py_ssize_t h = va.shape[0], w = va.shape[1];
    if (vl.readonly || vh.readonly || vl.shape[0] != h || vl.shape[1] != w || vh.shape[0] != h ||
        vh.shape[1] != w) {
        PyErr_SetString(PyExc_ValueError, "lo and hi must be writable and of the area's size");
        goto done;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = vfa_ranges3(va.buf, w, h, vl.buf, vh.buf);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&vh);
fail_l:
    PyBuffer_Release(&vl);
fail_a:
    PyBuffer_Release(&va);
    return result;
}

VFA_DOC(vfa_ranges_doc,
        "ranges(area, lo, hi)\n\n"
        "Write into lo and hi (int16, the shape of area: (height, width, 3), C-contiguous) the\n"
        "lowest and highest value of each pixel's 3x3 neighbourhood in area, channel by channel,\n"
        "the area's edges repeated.");

/* The b colour at p within a's range at p - d and the a colour at p within b's at p + d, all
 * positions clamped to the area (w wide, h tall). */
static inline int fits(const int16_t *const v[6], Py_ssize_t w, Py_ssize_t h, Py_ssize_t y,
                       Py_ssize_t x, Py_ssize_t dx, Py_ssize_t dy, int tolerance) {
    const Py_ssize_t at = (y * w + x) * 3;
    const Py_ssize_t from = (clamp(y - dy, 0, h - 1) * w + clamp(x - dx, 0, w - 1)) * 3;
    const Py_ssize_t to = (clamp(y + dy, 0, h - 1) * w + clamp(x + dx, 0, w - 1)) * 3;
    return inside(v[1] + at, v[2] + from, v[3] + from, tolerance) &&
           inside(v[0] + at, v[4] + to, v[5] + to, tolerance);
}

int vfa_search_tiles(const int16_t *const v[6], Py_ssize_t w, Py_ssize_t h,
                        const coord_t *ys, const coord_t *xs, const coord_t *tiles,
                        Py_ssize_t n, const coord_t *totals, Py_ssize_t t,
                        const Py_ssize_t *order, Py_ssize_t k, int tolerance, double misses_share,
                        double near_share, vfa_shift_t *out, Py_ssize_t *count) {
    Py_ssize_t *active = malloc(sizeof(Py_ssize_t) * (size_t)(n ? n : 1));
    Py_ssize_t *open = malloc(sizeof(Py_ssize_t) * (size_t)(t ? t : 1));
    Py_ssize_t *misses = calloc((size_t)(t ? t : 1), sizeof(Py_ssize_t));
    Py_ssize_t *fewest = malloc(sizeof(Py_ssize_t) * (size_t)(t ? t : 1));
    Py_ssize_t *nearest = malloc(sizeof(Py_ssize_t) * 2 * (size_t)(t ? t : 1));
    uint8_t *is_open = calloc((size_t)(t ? t : 1), 1);
    int status = -1;
    if (!active || !open || !misses || !fewest || !nearest || !is_open) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        active[i] = i;
        is_open[tiles[i]] = 1;
    }
    Py_ssize_t opened = 0;
    for (Py_ssize_t j = 0; j < t; j++) {
        if (is_open[j]) open[opened++] = j;
        fewest[j] = PY_SSIZE_T_MAX;
        nearest[2 * j] = nearest[2 * j + 1] = 0;
    }
    Py_ssize_t found = 0;
    for (Py_ssize_t d = 0; d < k && n > 0; d++) {
        const Py_ssize_t dx = order[2 * d], dy = order[2 * d + 1];
        for (Py_ssize_t i = 0; i < n; i++) {
            const Py_ssize_t p = active[i];
            if (!fits(v, w, h, ys[p], xs[p], dx, dy, tolerance)) misses[tiles[p]]++;
        }
        /* Tiles in order: the one explained now is closed, with the shortest displacement
         * that does it; two stray pixels are allowed in a small tile. */
        Py_ssize_t still = 0;
        for (Py_ssize_t o = 0; o < opened; o++) {
            const Py_ssize_t j = open[o], m = misses[j];
            misses[j] = 0;
            if (m < fewest[j]) {
                fewest[j] = m;
                nearest[2 * j] = dx;
                nearest[2 * j + 1] = dy;
            }
            const double allowed = misses_share * (double)totals[j];
            if ((double)m <= (allowed > 2.01 ? allowed : 2.01)) {
                out[found++] = (vfa_shift_t){j, dx, dy, 0};
                is_open[j] = 0;
            } else {
                open[still++] = j;
            }
        }
        opened = still;
        Py_ssize_t kept = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (is_open[tiles[active[i]]]) active[kept++] = active[i];
        n = kept;
    }
    /* Tiles no displacement explains within misses_share, but one nearly does. */
    status = 1;
    for (Py_ssize_t o = 0; o < opened; o++)
        if ((double)fewest[open[o]] > near_share * (double)totals[open[o]]) status = 0;
    for (Py_ssize_t o = 0; status && o < opened; o++) {
        const Py_ssize_t j = open[o];
        out[found++] = (vfa_shift_t){j, nearest[2 * j], nearest[2 * j + 1], 1};
    }
    *count = found;
done:
    free(active);
    free(open);
    free(misses);
    free(fewest);
    free(nearest);
    free(is_open);
    return status;
}

Py_ssize_t *vfa_read_order(PyObject *obj, Py_ssize_t *k) {
    PyObject *seq = PySequence_Fast(obj, "order must be a sequence of (dx, dy)");
    if (!seq) return NULL;
    *k = PySequence_Fast_GET_SIZE(seq);
    Py_ssize_t *order = malloc(sizeof(Py_ssize_t) * 2 * (size_t)(*k ? *k : 1));
    if (!order) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t d = 0; d < *k; d++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, d);
        if (!PyTuple_Check(item) ||
            !PyArg_ParseTuple(item, "nn", &order[2 * d], &order[2 * d + 1])) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "order must be a sequence of (dx, dy) pairs");
            Py_DECREF(seq);
            free(order);
            return NULL;
        }
    }
    Py_DECREF(seq);
    return order;
}

PyObject *vfa_tile_shifts(PyObject *self, PyObject *args) {
    PyObject *objs[6], *ys_obj, *xs_obj, *tiles_obj, *totals_obj, *order_obj;
    int tolerance;
    double misses_share, near_share;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOidd", &objs[0], &objs[1], &objs[2], &objs[3],
                          &objs[4], &objs[5], &ys_obj, &xs_obj, &tiles_obj, &totals_obj,
                          &order_obj, &tolerance, &misses_share, &near_share))
        return NULL;
    static const char *names[6] = {"a", "b", "lo_a", "hi_a", "lo_b", "hi_b"};
    Py_buffer v[6], vy, vx, vt, vn;
    int got = 0, held = 0;
    PyObject *result = NULL;
    Py_ssize_t *order = NULL;
    vfa_shift_t *out = NULL;
    for (; got < 6; got++)
        if (get_area(objs[got], &v[got], names[got]) < 0) goto release;
    const Py_ssize_t h = v[0].shape[0], w = v[0].shape[1];
    for (int i = 1; i < 6; i++) {
        if (v[i].shape[0] != h || v[i].shape[1] != w) {
            PyErr_SetString(PyExc_ValueError, "the areas and their envelopes must have one size");
            goto release;
        }
    }
    Py_buffer *views[4] = {&vy, &vx, &vt, &vn};
    PyObject *arrays[4] = {ys_obj, xs_obj, tiles_obj, totals_obj};
    static const char *array_names[4] = {"ys", "xs", "tiles", "totals"};
    for (; held < 4; held++)
        if (vfa_get_coords(arrays[held], views[held], PyBUF_C_CONTIGUOUS, array_names[held]) < 0)
            goto release;
    const Py_ssize_t n = vy.shape[0], t = vn.shape[0];
    const coord_t *ys = vy.buf, *xs = vx.buf, *tiles = vt.buf, *totals = vn.buf;
    if (vx.shape[0] != n || vt.shape[0] != n) {
        PyErr_SetString(PyExc_ValueError, "ys, xs and tiles must have one length");
        goto release;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ys[i] < 0 || ys[i] >= h || xs[i] < 0 || xs[i] >= w || tiles[i] < 0 || tiles[i] >= t) {
            PyErr_SetString(PyExc_ValueError,
                            "a pixel of ys, xs lies outside the area, or its tile has no total");
            goto release;
        }
    }
    Py_ssize_t k = 0;
    if (!(order = vfa_read_order(order_obj, &k))) goto release;
    out = malloc(sizeof(vfa_shift_t) * (size_t)(t ? t : 1));
    if (!out) {
        PyErr_NoMemory();
        goto release;
    }
    const int16_t *const planes[6] = {v[0].buf, v[1].buf, v[2].buf, v[3].buf, v[4].buf, v[5].buf};
    Py_ssize_t count = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = vfa_search_tiles(planes, w, h, ys, xs, tiles, n, totals, t, order, k, tolerance,
                          misses_share, near_share, out, &count);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
    } else if (status == 0) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        result = PyList_New(count);
        for (Py_ssize_t i = 0; result && i < count; i++) {
            PyObject *item = Py_BuildValue("(nnnO)", out[i].tile, out[i].dx, out[i].dy,
                                           out[i].near ? Py_True : Py_False);
            if (!item) Py_CLEAR(result);
            else PyList_SET_ITEM(result, i, item);
        }
    }
release:
    free(order);
    free(out);
    for (int i = 0; i < held; i++) PyBuffer_Release(views[i]);
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    return result;
}

VFA_DOC(vfa_tile_shifts_doc,
        "tile_shifts(a, b, lo_a, hi_a, lo_b, hi_b, ys, xs, tiles, totals, order, tolerance,\n"
        "misses, near) -> list of (tile, dx, dy, near) or None\n\n"
        "a, b: areas (int16, (h, w, 3)), lo/hi their 3x3 ranges (see ranges()). For each tile\n"
        "of the pixels (ys[i], xs[i]) (tile tiles[i], of totals[tile] changed pixels), the first\n"
        "displacement of order that explains all but max(2.01, misses * total) of its pixels:\n"
        "b's colour within a's range at p - d and a's within b's at p + d, give or take\n"
        "tolerance (positions clamped to the area). Tiles none explains take the displacement\n"
        "that left the fewest (near True), or, when one leaves more than near * total, None.");
