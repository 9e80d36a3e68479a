/* geohash.h -- the geohash of the geo commands (GEOADD, GEOSEARCH & co.)
 * and the spherical distances they measure.
 *
 * A position is stored as a sorted-set score: the longitude and latitude,
 * each scaled to a 26-bit cell index over [-180, 180] and
 * [-85.05112878, 85.05112878] (the Web Mercator limits), interleaved into
 * 52 bits (latitude on the even bits, longitude on the odd ones) and held
 * exactly in a double. A coarser hash of `step` bits per axis is the prefix
 * of every finer one, so the members inside one cell are one contiguous
 * score range: a search covers its shape with a cell and its eight
 * neighbours at a step chosen from the radius, reads those score ranges and
 * keeps the members whose distance passes the shape's test.
 *
 * Every formula follows Redis 7.0 operation by operation (the same double
 * arithmetic and libm calls), so positions, distances and hashes agree to
 * the last printed digit. Pure code: no allocation, no server types. */
#ifndef GOBLIN_UTIL_GEOHASH_H
#define GOBLIN_UTIL_GEOHASH_H
#include <stddef.h>
#include <stdint.h>

#define GEO_STEP_MAX 26 /* bits per axis of a stored position */
#define GEO_LAT_MIN (-85.05112878)
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN (-180.0)
#define GEO_LONG_MAX 180.0

/* A cell: the interleaved index bits of `step` bits per axis. A cleared
 * hash (bits 0, step 0) stands for "no cell". */
typedef struct geohash {
    uint64_t bits;
    uint8_t step;
} geohash;

typedef struct geo_range {
    double min, max;
} geo_range;

/* The cell's bounds. */
typedef struct geo_area {
    geo_range lon, lat;
} geo_area;

/* The hash of (lon, lat) at step (1..32) over the given axis ranges; 0 when
 * the arguments are out of bounds. */
int geohash_encode(const geo_range *lon_r, const geo_range *lat_r, double lon, double lat, int step,
                   geohash *out);
/* The same over the stored ranges (Mercator latitude limits). */
int geohash_encode_wgs84(double lon, double lat, int step, geohash *out);
/* The bounds of the cell h over the given axis ranges; 0 for a cleared h. */
int geohash_decode(const geo_range *lon_r, const geo_range *lat_r, geohash h, geo_area *area);
/* h's bits moved to the top of 52 bits: the lowest score of its cell. */
uint64_t geohash_align52(geohash h);

/* The 64 bits a score stands for, converted as Redis converts it (an
 * unsigned cast on x86-64: truncation toward zero; negative scores wrap,
 * -inf gives 2^63, +inf and values from 2^64 up give 0). Scores written by
 * GEOADD are exact 52-bit integers; others still decode to something. */
uint64_t geohash_score_bits(double score);
/* The position a score stands for: the centre of its 26-bit cell, clamped
 * to the stored ranges. */
void geohash_decode_score(double score, double *lon, double *lat);
/* The stored score of (lon, lat), within the GEOADD limits. */
uint64_t geohash_score_of(double lon, double lat);
/* The standard 11-character geohash (base32, latitude over [-90, 90]) of
 * a position; out receives 11 characters and a NUL. */
void geohash_string(double lon, double lat, char out[12]);

/* The eight neighbours of h at its step, wrapping around both axes, in
 * the order of enum geo_dir. */
enum geo_dir { GEO_N, GEO_S, GEO_E, GEO_W, GEO_NE, GEO_NW, GEO_SE, GEO_SW };
void geohash_neighbors(geohash h, geohash out[8]);

/* Distances in meters on a sphere of the Earth's mean radius (haversine). */
double geo_distance(double lon1, double lat1, double lon2, double lat2);
/* Along a meridian. */
double geo_lat_distance(double lat1, double lat2);

/* A search area: a circle of radius, or a box width x height aligned with
 * the meridians, both in `conversion` meters (the unit of the query)
 * around (lon, lat). */
enum { GEO_CIRCLE = 1, GEO_BOX = 2 };
typedef struct geo_shape {
    int type;
    double lon, lat;
    double radius;         /* GEO_CIRCLE */
    double width, height;  /* GEO_BOX */
    double conversion;     /* meters per unit */
} geo_shape;

/* 1 when (lon, lat) is inside the shape, with its distance in meters from
 * the centre in *dist. */
int geo_shape_contains(const geo_shape *s, double lon, double lat, double *dist);

/* The score ranges [min, max) to read for a search of s: its centre cell
 * and the neighbours that can hold part of the shape, in Redis's order
 * (centre, N, S, E, W, NE, NW, SE, SW). A neighbour equal to the last
 * neighbour kept is left out (at coarse steps neighbours wrap onto each
 * other; as in Redis the centre is not compared). Returns how many ranges
 * were written (at most 9). */
typedef struct geo_scorerange {
    uint64_t min, max;
} geo_scorerange;
int geo_search_ranges(const geo_shape *s, geo_scorerange out[9]);

/* A distance as the geo commands print it: rounded to 4 decimals
 * ("1.0000", "0.0012"). Returns the length; cap must be at least 32. */
int geo_format_distance(char *dst, size_t cap, double d);
#endif
