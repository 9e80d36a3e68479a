/* test_geohash.c -- util/geohash. Expected scores, positions, hashes and
 * distances were read from redis-server 7.0.15 (GEOADD then ZSCORE,
 * GEOPOS, GEOHASH, GEODIST); the search ranges are checked by brute force:
 * every point a shape contains must lie in one of them. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/geohash.h"
#include "util/strutil.h"
#include "unit.h"

/* A coordinate as GEOPOS prints it. */
static const char *coord(double v, char *buf) {
    ld_to_str_human(buf, STRUTIL_LDSTR, (long double)v);
    return buf;
}

static char cbuf[2][STRUTIL_LDSTR];

TEST(geohash, scores_of_positions) {
    CHECK_EQ(geohash_score_of(13.361389, 38.115556), 3479099956230698ULL);
    CHECK_EQ(geohash_score_of(15.087269, 37.502669), 3479447370796909ULL);
    CHECK_EQ(geohash_score_of(0, 0), 3377699720527872ULL);
    CHECK_EQ(geohash_score_of(-180, -85.05112878), 0);
    /* The upper corner gets index 2^26 on both axes: bits 52 and 53. */
    CHECK_EQ(geohash_score_of(180, 85.05112878), 13510798882111488ULL);
    /* A coarse hash is the prefix of a fine one. */
    geohash fine, coarse;
    CHECK(geohash_encode_wgs84(13.361389, 38.115556, 26, &fine));
    CHECK(geohash_encode_wgs84(13.361389, 38.115556, 10, &coarse));
    CHECK_EQ(fine.bits >> 32, coarse.bits);
    CHECK_EQ(geohash_align52(coarse), (fine.bits >> 32) << 32);
    /* Out of the stored limits: refused. */
    CHECK(!geohash_encode_wgs84(180.0001, 0, 26, &fine));
    CHECK(!geohash_encode_wgs84(0, 85.06, 26, &fine));
    CHECK(!geohash_encode_wgs84(0, 0, 0, &fine));
    CHECK(!geohash_encode_wgs84(0, 0, 33, &fine));
}

TEST(geohash, decode_as_geopos) {
    double lon, lat;
    geohash_decode_score(3479099956230698.0, &lon, &lat);
    CHECK_STR(coord(lon, cbuf[0]), "13.36138933897018433");
    CHECK_STR(coord(lat, cbuf[1]), "38.11555639549629859");
    geohash_decode_score(3479447370796909.0, &lon, &lat);
    CHECK_STR(coord(lon, cbuf[0]), "15.08726745843887329");
    CHECK_STR(coord(lat, cbuf[1]), "37.50266842333162032");
    geohash_decode_score(13510798882111488.0, &lon, &lat);
    CHECK_STR(coord(lon, cbuf[0]), "180");
    CHECK_STR(coord(lat, cbuf[1]), "85.0511287799999991");
    geohash_decode_score(0, &lon, &lat);
    CHECK_STR(coord(lon, cbuf[0]), "-179.99999731779098511");
    CHECK_STR(coord(lat, cbuf[1]), "-85.05112751263942528");
    geohash_decode_score(3377699720527872.0, &lon, &lat);
    CHECK_STR(coord(lon, cbuf[0]), "0.00000268220901489");
    CHECK_STR(coord(lat, cbuf[1]), "0.00000126736058093");
}

TEST(geohash, scores_not_written_by_geoadd) {
    /* Redis converts any score with an unsigned cast (x86-64). */
    CHECK_EQ(geohash_score_bits(-1.0), 0xFFFFFFFFFFFFFFFFULL);
    CHECK_EQ(geohash_score_bits(-1.5), 0xFFFFFFFFFFFFFFFFULL);
    CHECK_EQ(geohash_score_bits(-0.5), 0);
    CHECK_EQ(geohash_score_bits(1.5), 1);
    CHECK_EQ(geohash_score_bits(INFINITY), 0);
    CHECK_EQ(geohash_score_bits(-INFINITY), 0x8000000000000000ULL);
    CHECK_EQ(geohash_score_bits(1e300), 0);
    CHECK_EQ(geohash_score_bits(9223372036854775808.0), 0x8000000000000000ULL);
    CHECK_EQ(geohash_score_bits(18446744073709551616.0), 0);
    CHECK_EQ(geohash_score_bits(12345678901234567168.0), 12345678901234567168ULL);
    /* What GEOPOS then shows (read from redis-server). */
    double lon, lat;
    geohash_decode_score(-1, &lon, &lat);
    CHECK_STR(coord(lon, cbuf[0]), "180");
    CHECK_STR(coord(lat, cbuf[1]), "85.0511287799999991");
    geohash_decode_score(-INFINITY, &lon, &lat);
    CHECK_STR(coord(lon, cbuf[0]), "180");
    CHECK_STR(coord(lat, cbuf[1]), "-85.05112751263942528");
    geohash_decode_score(9007199254740992.0, &lon, &lat); /* longitude index 2^26 */
    CHECK_STR(coord(lon, cbuf[0]), "180");
    CHECK_STR(coord(lat, cbuf[1]), "-85.05112751263942528");
    geohash_decode_score(1.5, &lon, &lat); /* latitude index 1 */
    CHECK_STR(coord(lon, cbuf[0]), "-179.99999731779098511");
    CHECK_STR(coord(lat, cbuf[1]), "-85.05112497791824921");
}

TEST(geohash, strings) {
    char s[12];
    double lon, lat;
    struct {
        double score;
        const char *want;
    } cases[] = {
        {3479099956230698.0, "sqc8b49rny0"}, {3479447370796909.0, "sqdtr74hyu0"},
        {13510798882111488.0, "bp05b5048p0"}, {0, "00bh0hbj200"},
        {3377699720527872.0, "s0000000000"}, {9007199254740992.0, "00bh0hbj200"},
        {1.5, "00bh0hbj210"},                {-1.0, "bp05b5048p0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        geohash_decode_score(cases[i].score, &lon, &lat);
        geohash_string(lon, lat, s);
        CHECK_STR(s, cases[i].want);
    }
}

TEST(geohash, neighbors_wrap) {
    geohash h;
    CHECK(geohash_encode_wgs84(0.1, 0.1, 1, &h)); /* the north-east quadrant */
    CHECK_EQ(h.bits, 3);
    geohash nb[8];
    geohash_neighbors(h, nb);
    /* Two cells per axis: every move lands on the other one. */
    CHECK_EQ(nb[GEO_N].bits, 2);
    CHECK_EQ(nb[GEO_S].bits, 2);
    CHECK_EQ(nb[GEO_E].bits, 1);
    CHECK_EQ(nb[GEO_W].bits, 1);
    CHECK_EQ(nb[GEO_NE].bits, 0);
    CHECK_EQ(nb[GEO_SW].bits, 0);
    /* At step 26, a neighbour is one cell away on its axis only. */
    CHECK(geohash_encode_wgs84(13.361389, 38.115556, 26, &h));
    geohash_neighbors(h, nb);
    geo_area c, a;
    geohash_decode(&(geo_range){-180, 180}, &(geo_range){GEO_LAT_MIN, GEO_LAT_MAX}, h, &c);
    geohash_decode(&(geo_range){-180, 180}, &(geo_range){GEO_LAT_MIN, GEO_LAT_MAX}, nb[GEO_NE], &a);
    CHECK(a.lat.min == c.lat.max);
    CHECK(a.lon.min == c.lon.max);
    geohash_decode(&(geo_range){-180, 180}, &(geo_range){GEO_LAT_MIN, GEO_LAT_MAX}, nb[GEO_W], &a);
    CHECK(a.lon.max == c.lon.min);
    CHECK(a.lat.min == c.lat.min);
    /* The westmost cell's west neighbour is the eastmost one. */
    CHECK(geohash_encode_wgs84(-180, 0, 26, &h));
    geohash_neighbors(h, nb);
    geohash_decode(&(geo_range){-180, 180}, &(geo_range){GEO_LAT_MIN, GEO_LAT_MAX}, nb[GEO_W], &a);
    CHECK(a.lon.max == 180);
}

TEST(geohash, distances) {
    char buf[64];
    double lon1, lat1, lon2, lat2;
    geohash_decode_score(3479099956230698.0, &lon1, &lat1);
    geohash_decode_score(3479447370796909.0, &lon2, &lat2);
    double d = geo_distance(lon1, lat1, lon2, lat2);
    geo_format_distance(buf, sizeof(buf), d);
    CHECK_STR(buf, "166274.1516");
    geo_format_distance(buf, sizeof(buf), d / 1000);
    CHECK_STR(buf, "166.2742");
    CHECK(d == geo_distance(lon2, lat2, lon1, lat1));
    geohash_decode_score(13510798882111488.0, &lon1, &lat1);
    geohash_decode_score(0, &lon2, &lat2);
    geo_format_distance(buf, sizeof(buf), geo_distance(lon1, lat1, lon2, lat2) / 1609.34);
    CHECK_STR(buf, "11756.2756");
    geohash_decode_score(3377699720527872.0, &lon1, &lat1);
    geo_format_distance(buf, sizeof(buf), geo_distance(lon1, lat1, lon2, lat2) / 0.3048);
    CHECK_STR(buf, "34648333.0607");
    /* Same meridian: the latitude difference alone. */
    CHECK(geo_distance(10, 1, 10, 2) == geo_lat_distance(1, 2));
    CHECK(geo_distance(10, 5, 10, 5) == 0);
}

TEST(geohash, format_distance) {
    char buf[64];
    struct {
        double v;
        const char *want;
    } cases[] = {
        {0.0, "0.0000"},       {-0.0, "0.0000"},     {0.0001, "0.0001"}, {6.0642951598391699e-05, "0.0001"},
        {0.01, "0.0100"},      {-0.01, "-0.0100"},   {10.01, "10.0100"}, {0.00004, "0.0000"},
        {-0.00004, "0.0000"},  {123456.78905, "123456.7890"},
        {1e10, "10000000000.0000"},              {NAN, "-922337203685477.5808"},
        {INFINITY, "-922337203685477.5808"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int n = geo_format_distance(buf, sizeof(buf), cases[i].v);
        CHECK_MSG(!strcmp(buf, cases[i].want), "%.17g: \"%s\" != \"%s\"", cases[i].v, buf, cases[i].want);
        CHECK_EQ(n, strlen(cases[i].want));
    }
}

/* Is score inside one of the ranges? */
static int in_ranges(const geo_scorerange *r, int n, uint64_t score) {
    for (int i = 0; i < n; i++)
        if (score >= r[i].min && score < r[i].max) return 1;
    return 0;
}

static double uniform(unit_rng *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)(unit_rand(r) >> 11) / 9007199254740992.0);
}

TEST(geohash, search_ranges_cover_the_shape) {
    unit_rng rng = {2024};
    uint64_t shapes = unit_scaled(400, 40), tested = 0;
    for (uint64_t k = 0; k < shapes; k++) {
        geo_shape s = {0};
        s.type = k % 2 ? GEO_BOX : GEO_CIRCLE;
        s.lon = uniform(&rng, -180, 180);
        s.lat = uniform(&rng, -80, 80);
        s.conversion = 1000;
        double size = pow(10, uniform(&rng, -1, 3.3)); /* 100 m .. 2000 km */
        s.radius = size;
        s.width = size * uniform(&rng, 0.5, 2);
        s.height = size * uniform(&rng, 0.5, 2);
        geo_scorerange r[9];
        int n = geo_search_ranges(&s, r);
        CHECK(n >= 1 && n <= 9);
        /* Points scattered around the centre, at most twice the size away. */
        for (int i = 0; i < 400; i++) {
            double span = 2 * size * 1000 / 111000.0;
            double lon = s.lon + uniform(&rng, -span, span) / fmax(cos(s.lat * 0.0174533), 0.05);
            double lat = s.lat + uniform(&rng, -span, span);
            if (lon < -180 || lon > 180 || lat < GEO_LAT_MIN || lat > GEO_LAT_MAX) continue;
            uint64_t score = geohash_score_of(lon, lat);
            double plon, plat, dist;
            geohash_decode_score((double)score, &plon, &plat);
            if (!geo_shape_contains(&s, plon, plat, &dist)) continue;
            tested++;
            CHECK_MSG(in_ranges(r, n, score), "shape %d at %.6f,%.6f size %.3f km: %.6f,%.6f missed",
                      s.type, s.lon, s.lat, size, lon, lat);
        }
    }
    CHECK(tested > shapes * 20);
    unit_log("%llu points inside %llu shapes", (unsigned long long)tested, (unsigned long long)shapes);
}

TEST(geohash, shapes) {
    geo_shape c = {.type = GEO_CIRCLE, .lon = 0, .lat = 0, .radius = 100, .conversion = 1000};
    double d;
    CHECK(geo_shape_contains(&c, 0.5, 0.5, &d));
    CHECK(d > 78000 && d < 79000);
    CHECK(!geo_shape_contains(&c, 1, 0.5, &d));
    geo_shape b = {.type = GEO_BOX, .lon = 0, .lat = 0, .width = 200, .height = 100, .conversion = 1000};
    CHECK(geo_shape_contains(&b, 0.8, 0.4, &d)); /* a corner of the box, outside the circle of 50 km */
    CHECK(d > 98000);
    CHECK(!geo_shape_contains(&b, 0.8, 0.5, &d));
    CHECK(!geo_shape_contains(&b, 0.95, 0.1, &d));
    /* An unbounded radius reads the whole world at step 1. */
    geo_shape w = {.type = GEO_CIRCLE, .lon = 10, .lat = 10, .radius = INFINITY, .conversion = 1};
    geo_scorerange r[9];
    int n = geo_search_ranges(&w, r);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].min < lo) lo = r[i].min;
        if (r[i].max > hi) hi = r[i].max;
    }
    CHECK_EQ(lo, 0);
    CHECK_EQ(hi, 1ULL << 52);
    /* A zero radius: step 26, the centre cell only holds the centre. */
    geo_shape z = {.type = GEO_CIRCLE, .lon = 13.361389, .lat = 38.115556, .radius = 0, .conversion = 1};
    n = geo_search_ranges(&z, r);
    CHECK(in_ranges(r, n, 3479099956230698ULL));
}
