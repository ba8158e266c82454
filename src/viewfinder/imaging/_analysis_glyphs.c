/*
 * The glyph test (see analysis/glyphs.py for its reasons) in one call: glyph_tiles() cuts a
 * region's changed pixels into tiles, finds each tile's displacement (the search of
 * tile_shifts()) and measures what its sub-pixel rest leaves (tile_residuals()), the busiest
 * tiles first. Put together in Python, the bookkeeping between those steps (listing the pixels,
 * counting and ordering the tiles, cutting out and widening the areas) took as long as the
 * steps themselves on a line of text.
 */
#include "_analysis.h"

#include <stdlib.h>
#include <string.h>

/* Tiles tried before the rest: a change of content fails in the busiest, and the rest need not
 * be searched. (Each tile is judged on its own: the order changes only how soon a failure is
 * found, never the answer.) */
#define FIRST_TILES 3

typedef struct {
    Py_ssize_t tile, min_tile, min_tiles, max_pixels, pad;
    int tolerance;
    double misses, near, still, near_limit, limit;
} glyph_rule_t;

typedef struct {
    Py_ssize_t tile, total;
} counted_t;

static int busiest_first(const void *p, const void *q) {
    const counted_t *u = p, *v = q;
    if (u->total != v->total) return u->total > v->total ? -1 : 1;
    return (u->tile > v->tile) - (u->tile < v->tile);
}

/* One group of tiles (group[tile] == g): their displacements searched over the area around
 * their pixels, then their residuals. 1 when every tile passes, 0 when one fails, -1 when out
 * of memory. */
static int judge_group(const pixels_t *a, const pixels_t *b, Py_ssize_t iw, Py_ssize_t ih,
                       const mask_t *m, const uint8_t *group, uint8_t g, Py_ssize_t columns,
                       const coord_t *totals, Py_ssize_t t, const Py_ssize_t *order,
                       Py_ssize_t k, Py_ssize_t shift, const glyph_rule_t *r, Py_ssize_t n) {
    const Py_ssize_t size = r->tile;
    coord_t *ys = malloc(sizeof(coord_t) * 3 * (size_t)(n ? n : 1));
    vfa_shift_t *found = malloc(sizeof(vfa_shift_t) * (size_t)(t ? t : 1));
    vfa_tile_t *tiles = malloc(sizeof(vfa_tile_t) * (size_t)(t ? t : 1));
    int16_t *planes = NULL;
    int status = -1;
    if (!ys || !found || !tiles) goto done;
    coord_t *xs = ys + n, *of = ys + 2 * n;
    Py_ssize_t count = 0, x0 = iw, y0 = ih, x1 = 0, y1 = 0;
    for (Py_ssize_t row = 0; row < m->height; row++) {
        const uint8_t *line = m->data + row * m->stride;
        const Py_ssize_t base = (row / size) * columns, y = m->y + row;
        /* A tile's stretch of the row at a time: no division by the tile size per pixel. */
        for (Py_ssize_t tile = base, i0 = 0; i0 < m->width; tile++, i0 += size) {
            if (group[tile] != g) continue;
            const Py_ssize_t i1 = i0 + size < m->width ? i0 + size : m->width;
            for (Py_ssize_t i = i0; i < i1; i++) {
                if (!line[i]) continue;
                const Py_ssize_t x = m->x + i;
                ys[count] = (coord_t)y;
                xs[count] = (coord_t)x;
                of[count++] = (coord_t)tile;
                if (x < x0) x0 = x;
                if (x > x1) x1 = x;
                if (y < y0) y0 = y;
                if (y > y1) y1 = y;
            }
        }
    }
    if (count == 0) {
        status = 1;
        goto done;
    }
    /* The area the search reads: every pixel shift px away and its 3x3 neighbourhood. */
    x0 = x0 - shift - 1 > 0 ? x0 - shift - 1 : 0;
    y0 = y0 - shift - 1 > 0 ? y0 - shift - 1 : 0;
    x1 = x1 + shift + 2 < iw ? x1 + shift + 2 : iw;
    y1 = y1 + shift + 2 < ih ? y1 + shift + 2 : ih;
    const Py_ssize_t aw = x1 - x0, ah = y1 - y0, plane = aw * ah * 3;
    planes = malloc(sizeof(int16_t) * 6 * (size_t)plane);
    if (!planes) goto done;
    int16_t *const v[6] = {planes,         planes + plane,     planes + 2 * plane,
                           planes + 3 * plane, planes + 4 * plane, planes + 5 * plane};
    for (Py_ssize_t row = 0; row < ah; row++) {
        const uint8_t *pa = a->data + (y0 + row) * a->stride + x0 * a->channels;
        const uint8_t *pb = b->data + (y0 + row) * b->stride + x0 * b->channels;
        int16_t *to_a = v[0] + row * aw * 3, *to_b = v[1] + row * aw * 3;
        for (Py_ssize_t i = 0; i < aw; i++)
            for (int c = 0; c < 3; c++) {
                to_a[i * 3 + c] = pa[i * a->channels + c];
                to_b[i * 3 + c] = pb[i * b->channels + c];
            }
    }
    if (vfa_ranges3(v[0], aw, ah, v[2], v[3]) < 0 || vfa_ranges3(v[1], aw, ah, v[4], v[5]) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        ys[i] -= (coord_t)y0;
        xs[i] -= (coord_t)x0;
    }
    Py_ssize_t shifted = 0;
    const int16_t *const areas[6] = {v[0], v[1], v[2], v[3], v[4], v[5]};
    status = vfa_search_tiles(areas, aw, ah, ys, xs, of, count, totals, t, order, k, r->tolerance,
                              r->misses, r->near, found, &shifted);
    if (status <= 0) goto done;
    /* The displacement found, the sub-pixel rest must be smooth motion, tile by tile. */
    for (Py_ssize_t j = 0; j < shifted; j++) {
        const Py_ssize_t tile = found[j].tile;
        const Py_ssize_t tx = m->x + (tile % columns) * size, ty = m->y + (tile / columns) * size;
        const Py_ssize_t right = m->x + m->width - tx, bottom = m->y + m->height - ty;
        tiles[j] = (vfa_tile_t){tx,
                                ty,
                                right < size ? right : size,
                                bottom < size ? bottom : size,
                                found[j].dx,
                                found[j].dy,
                                found[j].near ? r->near_limit : r->limit};
    }
    Py_ssize_t failed = -1;
    status = vfa_tiles_over(a, b, iw, ih, tiles, shifted, r->pad, r->still, &failed) ? failed < 0
                                                                                        : -1;
done:
    free(ys);
    free(found);
    free(tiles);
    free(planes);
    return status;
}

/* 1 when the masked pixels are glyphs drawn again, 0 when not, -1 when out of memory. */
static int glyphs_redrawn(const pixels_t *a, const pixels_t *b, Py_ssize_t iw, Py_ssize_t ih,
                          const mask_t *m, const Py_ssize_t *order, Py_ssize_t k,
                          Py_ssize_t shift, const glyph_rule_t *r) {
    const Py_ssize_t size = r->tile, columns = m->width / size + 1;
    const Py_ssize_t t = ((m->height - 1) / size) * columns + (m->width - 1) / size + 1;
    coord_t *totals = calloc((size_t)t, sizeof(coord_t));
    counted_t *counted = malloc(sizeof(counted_t) * (size_t)t);
    uint8_t *group = calloc((size_t)t, 1);
    int status = -1;
    if (!totals || !counted || !group) goto done;
    Py_ssize_t n = 0;
    for (Py_ssize_t row = 0; row < m->height; row++) {
        const uint8_t *line = m->data + row * m->stride;
        coord_t *across = totals + (row / size) * columns;
        for (Py_ssize_t i0 = 0; i0 < m->width; i0 += size) {
            const Py_ssize_t i1 = i0 + size < m->width ? i0 + size : m->width;
            coord_t set = 0;
            for (Py_ssize_t i = i0; i < i1; i++) set += line[i] != 0;
            *across++ += set;
            n += set;
        }
    }
    status = 0;
    if (n == 0 || n > r->max_pixels) goto done;
    Py_ssize_t kept = 0;
    for (Py_ssize_t j = 0; j < t; j++)
        if (totals[j] >= r->min_tile) counted[kept++] = (counted_t){j, totals[j]};
    if (kept < r->min_tiles) goto done;
    qsort(counted, (size_t)kept, sizeof(counted_t), busiest_first);
    for (Py_ssize_t j = 0; j < kept; j++) group[counted[j].tile] = j < FIRST_TILES ? 1 : 2;
    status = 1;
    for (uint8_t g = 1; g <= 2 && status == 1; g++)
        status = judge_group(a, b, iw, ih, m, group, g, columns, totals, t, order, k, shift, r, n);
done:
    free(totals);
    free(counted);
    free(group);
    return status;
}

PyObject *vfa_glyph_tiles(PyObject *self, PyObject *args) {
    PyObject *a_obj, *b_obj, *mask_obj, *order_obj;
    Py_ssize_t x, y;
    glyph_rule_t r;
    if (!PyArg_ParseTuple(args, "OOOnnO(nnnninddddd)", &a_obj, &b_obj, &mask_obj, &x, &y,
                          &order_obj, &r.tile, &r.min_tile, &r.min_tiles, &r.max_pixels,
                          &r.tolerance, &r.pad, &r.misses, &r.near, &r.still, &r.near_limit,
                          &r.limit))
        return NULL;
    if (r.tile < 1) {
        PyErr_SetString(PyExc_ValueError, "the tile size must be 1 px or more");
        return NULL;
    }
    Py_ssize_t k = 0, shift = 0;
    Py_ssize_t *order = vfa_read_order(order_obj, &k);
    if (!order) return NULL;
    for (Py_ssize_t i = 0; i < 2 * k; i++) {
        const Py_ssize_t along = order[i] < 0 ? -order[i] : order[i];
        if (along > shift) shift = along;
    }
    placed_t p;
    if (vfa_get_placed(a_obj, b_obj, mask_obj, x, y, &p) < 0) {
        free(order);
        return NULL;
    }
    const mask_t m = vfa_placed_mask(&p, x, y);
    int status = 0;
    if (m.width > 0 && m.height > 0) {
        Py_BEGIN_ALLOW_THREADS
        status = glyphs_redrawn(&p.a, &p.b, p.w, p.h, &m, order, k, shift, &r);
        Py_END_ALLOW_THREADS
    }
    vfa_release_placed(&p);
    free(order);
    if (status < 0) return PyErr_NoMemory();
    return PyBool_FromLong(status);
}

VFA_DOC(vfa_glyph_tiles_doc,
        "glyph_tiles(a, b, mask, x, y, order, rule) -> bool\n\n"
        "Whether the changed pixels of mask (bool, placed at (x, y) in images a and b) are glyphs\n"
        "drawn again, tile by tile. rule is (tile size, pixels a tile needs to count, tiles that\n"
        "must count, most pixels, tolerance, pad, misses, near, still, limit when near, limit).\n"
        "The mask is cut into tiles of that size; with between 1 and most pixels and at least the\n"
        "tiles needed counting, each counting tile needs a displacement of order that\n"
        "tile_shifts() finds (over the pixels' area widened by the longest displacement and 1 px)\n"
        "and a residual within its limit, by tile_residuals() with pad and still.");
