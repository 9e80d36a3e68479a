/* geohash.c -- see geohash.h. Bit layout: a cell's latitude index sits on
 * the even bits of geohash.bits, its longitude index on the odd ones, each
 * `step` bits wide, except that a coordinate exactly on the upper limit of
 * its range gets index 2^step (one bit more), which every operation here
 * carries along unchanged as Redis does. Moving to a neighbour changes one
 * index by one, modulo 2^step. */
#include "util/geohash.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>

#define GEO_PI 3.14159265358979323846
#define EARTH_RADIUS_M 6372797.560856 /* the Earth's quadratic mean radius */
#define MERCATOR_MAX 20037726.37      /* half the Mercator world's width, m */

static const geo_range wgs_lon = {GEO_LONG_MIN, GEO_LONG_MAX};
static const geo_range wgs_lat = {GEO_LAT_MIN, GEO_LAT_MAX};

static inline double deg_rad(double deg) { return deg * (GEO_PI / 180.0); }
static inline double rad_deg(double rad) { return rad / (GEO_PI / 180.0); }

/* The bits of v spread to the even positions of the result. */
static uint64_t spread32(uint32_t v) {
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

/* The even bits of x gathered into 32 bits (spread32's inverse). */
static uint32_t gather32(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

static inline uint64_t interleave(uint32_t lat_idx, uint32_t lon_idx) {
    return spread32(lat_idx) | (spread32(lon_idx) << 1);
}

static inline int range_unset(const geo_range *r) { return r == NULL || (r->min == 0 && r->max == 0); }

int geohash_encode(const geo_range *lon_r, const geo_range *lat_r, double lon, double lat, int step,
                   geohash *out) {
    if (!out || step > 32 || step <= 0 || range_unset(lat_r) || range_unset(lon_r)) return 0;
    if (lon > GEO_LONG_MAX || lon < GEO_LONG_MIN || lat > GEO_LAT_MAX || lat < GEO_LAT_MIN) return 0;
    out->bits = 0;
    out->step = (uint8_t)step;
    if (lat < lat_r->min || lat > lat_r->max || lon < lon_r->min || lon > lon_r->max) return 0;
    double lat_off = (lat - lat_r->min) / (lat_r->max - lat_r->min);
    double lon_off = (lon - lon_r->min) / (lon_r->max - lon_r->min);
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    out->bits = interleave((uint32_t)lat_off, (uint32_t)lon_off);
    return 1;
}

int geohash_encode_wgs84(double lon, double lat, int step, geohash *out) {
    return geohash_encode(&wgs_lon, &wgs_lat, lon, lat, step, out);
}

int geohash_decode(const geo_range *lon_r, const geo_range *lat_r, geohash h, geo_area *area) {
    if ((h.bits == 0 && h.step == 0) || !area || range_unset(lat_r) || range_unset(lon_r)) return 0;
    uint32_t ilat = gather32(h.bits);
    uint32_t ilon = gather32(h.bits >> 1);
    double lat_scale = lat_r->max - lat_r->min;
    double lon_scale = lon_r->max - lon_r->min;
    double cells = (double)(1ULL << h.step);
    /* The index + 1 wraps in 32 bits, as the original arithmetic does. */
    area->lat.min = lat_r->min + (ilat * 1.0 / cells) * lat_scale;
    area->lat.max = lat_r->min + ((uint32_t)(ilat + 1u) * 1.0 / cells) * lat_scale;
    area->lon.min = lon_r->min + (ilon * 1.0 / cells) * lon_scale;
    area->lon.max = lon_r->min + ((uint32_t)(ilon + 1u) * 1.0 / cells) * lon_scale;
    return 1;
}

uint64_t geohash_align52(geohash h) { return h.bits << (52 - h.step * 2); }

uint64_t geohash_score_bits(double score) {
    const double two63 = 9223372036854775808.0;
    const uint64_t indefinite = 0x8000000000000000ULL; /* cvttsd2si's out-of-range answer */
    if (score >= two63) {
        double t = score - two63;
        uint64_t low = t < two63 ? (uint64_t)(int64_t)t : indefinite;
        return low ^ indefinite;
    }
    if (score >= -two63) return (uint64_t)(int64_t)score;
    return indefinite; /* below -2^63, -inf, NaN */
}

void geohash_decode_score(double score, double *lon, double *lat) {
    geohash h = {geohash_score_bits(score), GEO_STEP_MAX};
    geo_area a;
    geohash_decode(&wgs_lon, &wgs_lat, h, &a);
    double x = (a.lon.min + a.lon.max) / 2;
    if (x > GEO_LONG_MAX) x = GEO_LONG_MAX;
    if (x < GEO_LONG_MIN) x = GEO_LONG_MIN;
    double y = (a.lat.min + a.lat.max) / 2;
    if (y > GEO_LAT_MAX) y = GEO_LAT_MAX;
    if (y < GEO_LAT_MIN) y = GEO_LAT_MIN;
    *lon = x;
    *lat = y;
}

uint64_t geohash_score_of(double lon, double lat) {
    geohash h = {0, 0};
    geohash_encode_wgs84(lon, lat, GEO_STEP_MAX, &h);
    return geohash_align52(h);
}

void geohash_string(double lon, double lat, char out[12]) {
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    const geo_range lon_r = {-180, 180}, lat_r = {-90, 90};
    geohash h = {0, 0};
    geohash_encode(&lon_r, &lat_r, lon, lat, GEO_STEP_MAX, &h);
    /* 52 bits make ten characters (and two bits left over); the format
     * has eleven, and the last one is always '0'. */
    for (int i = 0; i < 10; i++) out[i] = alphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
    out[10] = '0';
    out[11] = '\0';
}

/* h moved by dlon cells east and dlat cells north, wrapping. */
static geohash geohash_move(geohash h, int dlon, int dlat) {
    uint32_t ilat = gather32(h.bits), ilon = gather32(h.bits >> 1);
    uint32_t mask = (uint32_t)((1ULL << h.step) - 1);
    if (dlon) ilon = (ilon + (uint32_t)dlon) & mask;
    if (dlat) ilat = (ilat + (uint32_t)dlat) & mask;
    return (geohash){interleave(ilat, ilon), h.step};
}

void geohash_neighbors(geohash h, geohash out[8]) {
    static const int d[8][2] = {
        [GEO_N] = {0, 1},   [GEO_S] = {0, -1},  [GEO_E] = {1, 0},   [GEO_W] = {-1, 0},
        [GEO_NE] = {1, 1},  [GEO_NW] = {-1, 1}, [GEO_SE] = {1, -1}, [GEO_SW] = {-1, -1},
    };
    for (int i = 0; i < 8; i++) out[i] = geohash_move(h, d[i][0], d[i][1]);
}

double geo_lat_distance(double lat1, double lat2) { return EARTH_RADIUS_M * fabs(deg_rad(lat2) - deg_rad(lat1)); }

double geo_distance(double lon1, double lat1, double lon2, double lat2) {
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    /* Same meridian: the haversine reduces to the latitude difference. */
    if (v == 0.0) return geo_lat_distance(lat1, lat2);
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * EARTH_RADIUS_M * asin(sqrt(a));
}

int geo_shape_contains(const geo_shape *s, double lon, double lat, double *dist) {
    if (s->type == GEO_CIRCLE) {
        *dist = geo_distance(s->lon, s->lat, lon, lat);
        return !(*dist > s->radius * s->conversion);
    }
    double width_m = s->width * s->conversion, height_m = s->height * s->conversion;
    /* The cheap test first: the distance along the meridian. */
    if (geo_lat_distance(lat, s->lat) > height_m / 2) return 0;
    if (geo_distance(lon, lat, s->lon, lat) > width_m / 2) return 0;
    *dist = geo_distance(s->lon, s->lat, lon, lat);
    return 1;
}

/* The step whose cells are about the size of range_m, coarser near the
 * poles where meridians converge. */
static int steps_for_radius(double range_m, double lat) {
    if (range_m == 0) return GEO_STEP_MAX;
    int step = 1;
    while (range_m < MERCATOR_MAX) {
        range_m *= 2;
        step++;
    }
    step -= 2; /* keep the shape inside the cell and its neighbours */
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > GEO_STEP_MAX) step = GEO_STEP_MAX;
    return step;
}

/* The shape's bounding box: {min lon, min lat, max lon, max lat}. The
 * longitude span is measured on the edge nearer the pole (the top edge in
 * the northern hemisphere, the bottom one in the southern), where a
 * degree of longitude is shortest. */
static void shape_bounds(const geo_shape *s, double b[4]) {
    double height = s->conversion * (s->type == GEO_CIRCLE ? s->radius : s->height / 2);
    double width = s->conversion * (s->type == GEO_CIRCLE ? s->radius : s->width / 2);
    const double lat_delta = rad_deg(height / EARTH_RADIUS_M);
    const double lon_delta_top = rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(s->lat + lat_delta)));
    const double lon_delta_bottom = rad_deg(width / EARTH_RADIUS_M / cos(deg_rad(s->lat - lat_delta)));
    int south = s->lat < 0;
    b[0] = south ? s->lon - lon_delta_bottom : s->lon - lon_delta_top;
    b[2] = south ? s->lon + lon_delta_bottom : s->lon + lon_delta_top;
    b[1] = s->lat - lat_delta;
    b[3] = s->lat + lat_delta;
}

/* The centre cell of s at step, its neighbours and its bounds. */
static void cells_at(const geo_shape *s, int step, geohash *h, geohash nb[8], geo_area *area) {
    geohash_encode(&wgs_lon, &wgs_lat, s->lon, s->lat, step, h);
    geohash_neighbors(*h, nb);
    geohash_decode(&wgs_lon, &wgs_lat, *h, area);
}

int geo_search_ranges(const geo_shape *s, geo_scorerange out[9]) {
    double b[4];
    shape_bounds(s, b);
    double min_lon = b[0], min_lat = b[1], max_lon = b[2], max_lat = b[3];
    double radius_m = s->type == GEO_CIRCLE
                          ? s->radius
                          : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    radius_m *= s->conversion;
    int steps = steps_for_radius(radius_m, s->lat);

    geohash h, nb[8];
    geo_area area;
    cells_at(s, steps, &h, nb, &area);
    /* Near a cell's edge the estimated step can leave part of the shape
     * outside the neighbours: one step coarser then. */
    geo_area n, so, e, w;
    geohash_decode(&wgs_lon, &wgs_lat, nb[GEO_N], &n);
    geohash_decode(&wgs_lon, &wgs_lat, nb[GEO_S], &so);
    geohash_decode(&wgs_lon, &wgs_lat, nb[GEO_E], &e);
    geohash_decode(&wgs_lon, &wgs_lat, nb[GEO_W], &w);
    int coarser = n.lat.max < max_lat || so.lat.min > min_lat || e.lon.max < max_lon || w.lon.min > min_lon;
    if (steps > 1 && coarser) {
        steps--;
        cells_at(s, steps, &h, nb, &area);
    }
    /* Neighbours on a side the shape does not reach are not read. */
    static const geohash none = {0, 0};
    if (steps >= 2) {
        if (area.lat.min < min_lat) nb[GEO_S] = nb[GEO_SW] = nb[GEO_SE] = none;
        if (area.lat.max > max_lat) nb[GEO_N] = nb[GEO_NE] = nb[GEO_NW] = none;
        if (area.lon.min < min_lon) nb[GEO_W] = nb[GEO_SW] = nb[GEO_NW] = none;
        if (area.lon.max > max_lon) nb[GEO_E] = nb[GEO_SE] = nb[GEO_NE] = none;
    }

    geohash cells[9] = {h, nb[GEO_N], nb[GEO_S], nb[GEO_E], nb[GEO_W], nb[GEO_NE], nb[GEO_NW], nb[GEO_SE], nb[GEO_SW]};
    int nout = 0, last = 0;
    for (int i = 0; i < 9; i++) {
        if (cells[i].bits == 0 && cells[i].step == 0) continue;
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) continue;
        geohash next = cells[i];
        next.bits++;
        out[nout].min = geohash_align52(cells[i]);
        out[nout].max = geohash_align52(next);
        nout++;
        last = i;
    }
    return nout;
}

int geo_format_distance(char *dst, size_t cap, double d) {
    if (d == 0) return snprintf(dst, cap, "0.0000");
    long long scaled = llrint(d * 10000.0);
    unsigned long long v;
    int neg = scaled < 0;
    if (!neg) v = (unsigned long long)scaled;
    else if (scaled == LLONG_MIN) v = (unsigned long long)LLONG_MAX + 1;
    else v = (unsigned long long)-scaled;
    return snprintf(dst, cap, "%s%llu.%04llu", neg ? "-" : "", v / 10000, v % 10000);
}
