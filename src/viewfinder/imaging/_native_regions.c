/* regions(): the changed pixels of the label plane clustered into boxes. */
#include "_native.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of `word` equal to `value` get their high bit set (exact, no false positives). */
ALWAYS_INLINE uint64_t bytes_equal(uint64_t word, uint8_t value) {
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t t = word ^ (0x0101010101010101ull * value);
    return ~(((t & low7) + low7) | t | low7);
}

typedef struct {
    Py_ssize_t x0, y0, x1, y1; /* inclusive bounds */
    Py_ssize_t count;
} box_t;

static Py_ssize_t uf_find(Py_ssize_t *parent, Py_ssize_t i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void uf_union(Py_ssize_t *parent, Py_ssize_t i, Py_ssize_t j) {
    i = uf_find(parent, i);
    j = uf_find(parent, j);
    if (i != j) parent[i > j ? i : j] = i < j ? i : j;
}

static inline void box_grow(box_t *a, const box_t *b) {
    if (b->x0 < a->x0) a->x0 = b->x0;
    if (b->y0 < a->y0) a->y0 = b->y0;
    if (b->x1 > a->x1) a->x1 = b->x1;
    if (b->y1 > a->y1) a->y1 = b->y1;
    a->count += b->count;
}

static int cmp_box(const void *pa, const void *pb) {
    const box_t *a = pa, *b = pb;
    if (a->y0 != b->y0) return a->y0 < b->y0 ? -1 : 1;
    if (a->x0 != b->x0) return a->x0 < b->x0 ? -1 : 1;
    return 0;
}

/* Pixels first..last of row y, all in one cell, added to that cell's box. */
ALWAYS_INLINE void add_span(box_t *cell_row, Py_ssize_t cell, Py_ssize_t first, Py_ssize_t last,
                            Py_ssize_t y, Py_ssize_t *cx, Py_ssize_t *edge) {
    if (first >= *edge || first < *edge - cell) { /* a division only on entering another cell */
        *cx = first / cell;
        *edge = (*cx + 1) * cell;
    }
    box_t *b = &cell_row[*cx];
    if (b->count == 0) {
        b->x0 = first;
        b->x1 = last;
        b->y0 = b->y1 = y;
    } else {
        if (first < b->x0) b->x0 = first;
        if (last > b->x1) b->x1 = last;
        b->y1 = y; /* rows are visited in order */
    }
    b->count += last - first + 1;
}

/* Per-cell exact bounding boxes of the flagged pixels (up to three label values). */
static void scan_cells(const uint8_t *labels, Py_ssize_t stride, Py_ssize_t w, Py_ssize_t h,
                       const uint8_t *flags, int nflags, Py_ssize_t cell, Py_ssize_t gw,
                       box_t *cells) {
    uint8_t f0 = flags[0], f1 = nflags > 1 ? flags[1] : f0, f2 = nflags > 2 ? flags[2] : f0;
    for (Py_ssize_t y = 0; y < h; y++) {
        const uint8_t *row = labels + y * stride;
        box_t *cell_row = cells + (y / cell) * gw;
        Py_ssize_t x = 0, cx = 0, edge = 0;
        for (; x + 8 <= w; x += 8) {
            /* Most of a plane is unchanged (label 0): whole runs of 32 bytes are skipped first. */
            while (x + 32 <= w) {
                uint64_t q[4];
                memcpy(q, row + x, 32);
                if (q[0] | q[1] | q[2] | q[3]) break;
                x += 32;
            }
            if (x + 8 > w) break;
            uint64_t word;
            memcpy(&word, row + x, 8);
            /* Flagged bytes' high bits, visited in order: no branch on each label (flagged
             * pixels sit among anti-aliased and subtle ones, and those branches mispredict). */
            uint64_t hits = bytes_equal(word, f0) | bytes_equal(word, f1) | bytes_equal(word, f2);
            /* Eight flagged pixels in one cell (words start at multiples of 8): one update, as
             * inside a tinted or recoloured area, where every pixel is flagged. */
            if (hits == 0x8080808080808080ull && x / cell == (x + 7) / cell) {
                add_span(cell_row, cell, x, x + 7, y, &cx, &edge);
                continue;
            }
            while (hits) {
                int k = __builtin_ctzll(hits) >> 3;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                k = 7 - k; /* the word's first byte is its most significant */
#endif
                add_span(cell_row, cell, x + k, x + k, y, &cx, &edge);
                hits &= hits - 1;
            }
        }
        for (; x < w; x++)
            if (row[x] == f0 || row[x] == f1 || row[x] == f2)
                add_span(cell_row, cell, x, x, y, &cx, &edge);
    }
}

/*
 * Cluster flagged pixels: cells at most `gap` cells apart join one cluster; clusters whose boxes
 * overlap are merged. Returns the number of boxes (or -1 when out of memory); when that is more
 * than max_boxes, no box is written and the cells are left folded into their roots.
 */
static Py_ssize_t cluster(box_t *cells, Py_ssize_t gw, Py_ssize_t gh, Py_ssize_t gap,
                          Py_ssize_t max_boxes, box_t **out_boxes) {
    Py_ssize_t n = gw * gh;
    Py_ssize_t *parent = malloc(sizeof(Py_ssize_t) * (size_t)(n ? n : 1));
    if (!parent) return -1;
    for (Py_ssize_t i = 0; i < n; i++) parent[i] = i;
    for (Py_ssize_t cy = 0; cy < gh; cy++) {
        for (Py_ssize_t cx = 0; cx < gw; cx++) {
            Py_ssize_t i = cy * gw + cx;
            if (!cells[i].count) continue;
            for (Py_ssize_t dy = 0; dy <= gap && cy + dy < gh; dy++) {
                for (Py_ssize_t dx = -gap; dx <= gap; dx++) {
                    Py_ssize_t nx = cx + dx;
                    if ((dy == 0 && dx <= 0) || nx < 0 || nx >= gw) continue;
                    Py_ssize_t j = (cy + dy) * gw + nx;
                    if (cells[j].count) uf_union(parent, i, j);
                }
            }
        }
    }
    /* Roots keep the lowest index, so one forward pass folds every cell into its root. */
    Py_ssize_t nboxes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!cells[i].count) continue;
        Py_ssize_t r = uf_find(parent, i);
        if (r == i) {
            nboxes++;
        } else {
            box_grow(&cells[r], &cells[i]);
            cells[i].count = 0;
        }
    }
    free(parent);
    if (nboxes > max_boxes) return nboxes; /* the caller coarsens the grid and tries again */
    box_t *boxes = malloc(sizeof(box_t) * (size_t)(nboxes ? nboxes : 1));
    if (!boxes) return -1;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (cells[i].count) boxes[k++] = cells[i];
    /* Overlapping boxes would crop the same pixels twice: merge them until none overlap. */
    for (int merged = 1; merged;) {
        merged = 0;
        for (Py_ssize_t i = 0; i < nboxes; i++) {
            for (Py_ssize_t j = i + 1; j < nboxes; j++) {
                box_t *a = &boxes[i], *b = &boxes[j];
                if (a->x0 > b->x1 || b->x0 > a->x1 || a->y0 > b->y1 || b->y0 > a->y1) continue;
                box_grow(a, b);
                boxes[j--] = boxes[--nboxes];
                merged = 1;
            }
        }
    }
    qsort(boxes, (size_t)nboxes, sizeof(box_t), cmp_box);
    *out_boxes = boxes;
    return nboxes;
}

static Py_ssize_t find_regions(const uint8_t *labels, Py_ssize_t stride, Py_ssize_t w,
                               Py_ssize_t h, const uint8_t *flags, int nflags, Py_ssize_t cell,
                               Py_ssize_t gap, Py_ssize_t max_boxes, box_t **boxes) {
    Py_ssize_t gw = (w + cell - 1) / cell, gh = (h + cell - 1) / cell;
    box_t *cells = calloc((size_t)(gw * gh ? gw * gh : 1), sizeof(box_t));
    if (!cells) return -1;
    scan_cells(labels, stride, w, h, flags, nflags, cell, gw, cells);
    for (;;) {
        Py_ssize_t nboxes = cluster(cells, gw, gh, gap, max_boxes, boxes);
        if (nboxes <= max_boxes) {
            free(cells);
            return nboxes;
        }
        /* Too many clusters (heavy noise): halve the grid resolution and cluster again. */
        Py_ssize_t gw2 = (gw + 1) / 2, gh2 = (gh + 1) / 2;
        box_t *coarse = calloc((size_t)(gw2 * gh2), sizeof(box_t));
        if (!coarse) {
            free(cells);
            return -1;
        }
        for (Py_ssize_t i = 0; i < gw * gh; i++) {
            if (!cells[i].count) continue;
            box_t *c = &coarse[(i / gw / 2) * gw2 + (i % gw) / 2];
            if (c->count == 0)
                *c = cells[i];
            else
                box_grow(c, &cells[i]);
        }
        free(cells);
        cells = coarse;
        gw = gw2;
        gh = gh2;
    }
}

VFN_DOC(vfn_regions_doc,
             "regions(labels, flagged, cell, gap, max_boxes)\n"
             "--\n\n"
             "Cluster the pixels whose label is one of the (up to three) `flagged` bytes into\n"
             "boxes (x, y, width, height, count), top to bottom. Cells of `cell` pixels at most\n"
             "`gap` cells apart join; when more than max_boxes clusters form, the grid coarsens\n"
             "until they fit, so heavy noise gives a few coarse regions rather than thousands.");

PyObject *vfn_regions(PyObject *self, PyObject *args) {
    PyObject *labels_obj;
    const char *flags;
    Py_ssize_t nflags, cell, gap, max_boxes;
    if (!PyArg_ParseTuple(args, "Oy#nnn", &labels_obj, &flags, &nflags, &cell, &gap, &max_boxes))
        return NULL;
    if (cell < 1 || gap < 0 || max_boxes < 1 || nflags < 1 || nflags > 3) {
        PyErr_SetString(PyExc_ValueError,
                        "cell and max_boxes must be >= 1, gap >= 0, and 1 to 3 flagged labels");
        return NULL;
    }
    Py_buffer vl;
    if (vfn_get_plane(labels_obj, &vl, 0, "labels") < 0) return NULL;
    box_t *boxes = NULL;
    Py_ssize_t nboxes;
    Py_BEGIN_ALLOW_THREADS
    nboxes = find_regions(vl.buf, vl.strides[0], vl.shape[1], vl.shape[0], (const uint8_t *)flags,
                          (int)nflags, cell, gap, max_boxes, &boxes);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vl);
    if (nboxes < 0) return PyErr_NoMemory();
    PyObject *list = PyList_New(nboxes);
    for (Py_ssize_t i = 0; list && i < nboxes; i++) {
        box_t *b = &boxes[i];
        PyObject *t = Py_BuildValue("nnnnn", b->x0, b->y0, b->x1 - b->x0 + 1, b->y1 - b->y0 + 1,
                                    b->count);
        if (!t) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, t);
    }
    free(boxes);
    return list;
}
