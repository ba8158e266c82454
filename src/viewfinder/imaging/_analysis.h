/*
 * What the files of the _analysis extension share: the views of images and float planes, the
 * buffer check of an image, and the methods that _analysis.c's module table lists. Symbols
 * shared between files carry the vfa_ prefix so that they cannot clash with a library's.
 */
#ifndef VIEWFINDER_ANALYSIS_H
#define VIEWFINDER_ANALYSIS_H

#include "_buffers.h"

#include <stdint.h>

typedef struct {
    const uint8_t *data;
    Py_ssize_t stride;
    int channels;
} pixels_t;

typedef struct {
    float *data;
    Py_ssize_t stride; /* floats from one row to the next */
    Py_ssize_t width, height;
} plane3_t; /* rows of (r, g, b) float triples */

/* A uint8 image of shape (height, width, 3 or 4) with contiguous rows (see get_uint8_image),
 * viewed as `im`, or ValueError naming it and -1. */
int vfa_get_pixels(PyObject *obj, Py_buffer *view, pixels_t *im, const char *name);

/* Two such images a and b of one width and height, or ValueError and -1 with nothing held. */
int vfa_get_pair(PyObject *a_obj, PyObject *b_obj, Py_buffer *va, Py_buffer *vb, pixels_t *a,
                 pixels_t *b);

/* Rows, columns and tile numbers of pixels are int32: PNG itself bounds a side to 2^31 - 1 px,
 * and a region of millions of changed pixels lists them in half the memory intp would take. */
typedef int32_t coord_t;

/* A 1-D int32 array got with the buffer flags given (PyBUF_STRIDED_RO, PyBUF_C_CONTIGUOUS, with
 * PyBUF_WRITABLE if it is written), or ValueError naming it and -1. */
int vfa_get_coords(PyObject *obj, Py_buffer *view, int flags, const char *name);

/* Whether the area [x, x + w) x [y, y + h) is not empty and lies inside the image viewed by
 * `view`: 0, or ValueError and -1. */
int vfa_check_area(const Py_buffer *view, Py_ssize_t x, Py_ssize_t y, Py_ssize_t w, Py_ssize_t h);

/* Two images of one size and a bool mask placed at (x, y) inside them. */
typedef struct {
    Py_buffer va, vb, vm;
    pixels_t a, b;
    Py_ssize_t w, h;
} placed_t;

/* Views of a, b and the mask, checked; on failure ValueError (or the buffer's error), nothing
 * held and -1. Release with vfa_release_placed() (_analysis_envelope.c). */
int vfa_get_placed(PyObject *a_obj, PyObject *b_obj, PyObject *mask_obj, Py_ssize_t x,
                   Py_ssize_t y, placed_t *p);
void vfa_release_placed(placed_t *p);

/* A region's mask of changed pixels (nonzero bytes), width x height, placed at (x, y). */
typedef struct {
    const uint8_t *data;
    Py_ssize_t stride, width, height, x, y;
} mask_t;

mask_t vfa_placed_mask(const placed_t *p, Py_ssize_t x, Py_ssize_t y);

/* The noise test's parts, on images a and b of w x h: whether every masked pixel's colour lies
 * within (2 levels of) the other image's 3x3 range (envelope()), how many masked pixels
 * crossed their neighbourhood, counted up to `need` (flips()), and the motion residual of a
 * box and `pad` px around it (-1 when out of memory). */
int vfa_envelope_holds(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                       const mask_t *m, int skip_edges);
Py_ssize_t vfa_count_flips(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                           const mask_t *m, float share, float contrast, float plain,
                           Py_ssize_t need);
int vfa_box_residual(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                     Py_ssize_t x, Py_ssize_t y, Py_ssize_t bw, Py_ssize_t bh, Py_ssize_t pad,
                     double still, float *residual, double *motion, float *unmoved);

/* The glyph test's parts (_analysis_envelope.c, _analysis_motion.c; glyph_tiles() in
 * _analysis_glyphs.c puts them together). vfa_ranges3: each pixel's 3x3 range in an int16
 * (r, g, b) area, w x h, into lo and hi (-1 when out of memory). vfa_search_tiles: the search of
 * tile_shifts() over the areas v (a, b, lo_a, hi_a, lo_b, hi_b), -1 out of memory, 0 when a
 * tile is left that no displacement nearly explains, else 1 with *count shifts in out.
 * vfa_tiles_over: tile_residuals() of n tiles, *failed the first over its limit or -1 (0 when
 * out of memory, else 1). */
typedef struct {
    Py_ssize_t tile, dx, dy;
    int near;
} vfa_shift_t;

typedef struct {
    Py_ssize_t x, y, w, h, dx, dy;
    double limit;
} vfa_tile_t;

int vfa_ranges3(const int16_t *a, Py_ssize_t w, Py_ssize_t h, int16_t *lo, int16_t *hi);
/* The displacements of a sequence of (dx, dy) pairs, dx and dy alternating (free() it), with
 * their number in *k; NULL and TypeError (or MemoryError). */
Py_ssize_t *vfa_read_order(PyObject *obj, Py_ssize_t *k);
int vfa_search_tiles(const int16_t *const v[6], Py_ssize_t w, Py_ssize_t h, const coord_t *ys,
                     const coord_t *xs, const coord_t *tiles, Py_ssize_t n, const coord_t *totals,
                     Py_ssize_t t, const Py_ssize_t *order, Py_ssize_t k, int tolerance,
                     double misses_share, double near_share, vfa_shift_t *out, Py_ssize_t *count);
int vfa_tiles_over(const pixels_t *a, const pixels_t *b, Py_ssize_t w, Py_ssize_t h,
                   const vfa_tile_t *tiles, Py_ssize_t n, Py_ssize_t pad, double still,
                   Py_ssize_t *failed);

/* Static in every file that includes it: it must inline into the kernels' loops. */
static inline Py_ssize_t clamp(Py_ssize_t v, Py_ssize_t lo, Py_ssize_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Asks for the n bytes two rows below `row` (rows stride apart) when `there` is such a row.
 * A row of an area is a few cache lines a page from the last, which the hardware does not
 * fetch ahead: asked for early, it has arrived when read (a sixth off the noise test). */
static inline void fetch_ahead(const uint8_t *row, Py_ssize_t stride, size_t n, int there) {
    if (there)
        for (size_t i = 0; i < n; i += 64) __builtin_prefetch(row + 2 * stride + i);
}

/* A method's docstring, defined beside the method for the module table. */
#define VFA_DOC(name, text) const char name[] = PyDoc_STR(text)

/* The methods: is_noise and noise_run (_analysis_noise.c), blur, motion_residual and tile_residuals
 * (_analysis_motion.c), envelope, flips, ranges and tile_shifts (_analysis_envelope.c),
 * straight_run and ink_bounds (_analysis_edges.c), votes (_analysis_votes.c), matches, rank,
 * carried and frame_colour (_analysis_moves.c), spread and pixels (_analysis_stats.c), recoloured,
 * one_fill, edges and colours (_analysis_colours.c), grey_pair, cross_power and peaks
 * (_analysis_phase.c), glyph_tiles (_analysis_glyphs.c). */
PyObject *vfa_blur(PyObject *self, PyObject *args);
PyObject *vfa_motion_residual(PyObject *self, PyObject *args);
PyObject *vfa_tile_residuals(PyObject *self, PyObject *args);
PyObject *vfa_envelope(PyObject *self, PyObject *args);
PyObject *vfa_is_noise(PyObject *self, PyObject *args);
PyObject *vfa_noise_run(PyObject *self, PyObject *args);
PyObject *vfa_votes(PyObject *self, PyObject *args);
PyObject *vfa_matches(PyObject *self, PyObject *args);
PyObject *vfa_straight_run(PyObject *self, PyObject *args);
PyObject *vfa_ink_bounds(PyObject *self, PyObject *args);
PyObject *vfa_rank(PyObject *self, PyObject *args);
PyObject *vfa_carried(PyObject *self, PyObject *args);
PyObject *vfa_frame_colour(PyObject *self, PyObject *args);
PyObject *vfa_flips(PyObject *self, PyObject *args);
PyObject *vfa_spread(PyObject *self, PyObject *args);
PyObject *vfa_pixels(PyObject *self, PyObject *args);
PyObject *vfa_tile_shifts(PyObject *self, PyObject *args);
PyObject *vfa_ranges(PyObject *self, PyObject *args);
PyObject *vfa_recoloured(PyObject *self, PyObject *args);
PyObject *vfa_one_fill(PyObject *self, PyObject *args);
PyObject *vfa_edges(PyObject *self, PyObject *args);
PyObject *vfa_colours(PyObject *self, PyObject *args);
PyObject *vfa_grey_pair(PyObject *self, PyObject *args);
PyObject *vfa_cross_power(PyObject *self, PyObject *args);
PyObject *vfa_peaks(PyObject *self, PyObject *args);
PyObject *vfa_glyph_tiles(PyObject *self, PyObject *args);
extern const char vfa_blur_doc[], vfa_motion_residual_doc[], vfa_tile_residuals_doc[],
    vfa_envelope_doc[], vfa_is_noise_doc[], vfa_noise_run_doc[], vfa_votes_doc[], vfa_matches_doc[],
    vfa_straight_run_doc[], vfa_ink_bounds_doc[], vfa_rank_doc[], vfa_carried_doc[],
    vfa_frame_colour_doc[], vfa_flips_doc[], vfa_spread_doc[], vfa_pixels_doc[],
    vfa_tile_shifts_doc[], vfa_recoloured_doc[], vfa_one_fill_doc[], vfa_edges_doc[],
    vfa_colours_doc[], vfa_ranges_doc[], vfa_grey_pair_doc[], vfa_cross_power_doc[],
    vfa_peaks_doc[], vfa_glyph_tiles_doc[];

#endif
