/* lolwut.c -- LOLWUT [VERSION v] [args]: computer art and the version.
 *
 * As Redis 7.0: without VERSION, or with a version other than 5 and 6, the
 * reply is the version line alone. VERSION 5 draws Georg Nees's
 * "Schotter" (1968): a grid of squares that tilt and drift more the lower
 * their row, on a canvas of 2x4-pixel cells printed as Unicode braille
 * characters (U+2800 + one bit per pixel). VERSION 6 draws a city skyline
 * of grey towers with lit windows, one terminal cell per pixel, coloured
 * with ANSI escapes. Both are random and bounded (at most 1000 columns,
 * 200 squares or 1000 rows), so they stay cheap. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/server/admin_family.h"
#include "session/reply.h"
#include "base/process.h"
#include "util/rand.h"
#include "util/strbuf.h"

typedef struct canvas {
    int w, h;
    unsigned char *px;
} canvas;

static int canvas_init(canvas *cv, int w, int h, int color) {
    cv->w = w;
    cv->h = h;
    cv->px = malloc((size_t)w * (size_t)h);
    if (!cv->px) return -1;
    memset(cv->px, color, (size_t)w * (size_t)h);
    return 0;
}

static void plot(canvas *cv, int x, int y, int color) {
    if (x >= 0 && y >= 0 && x < cv->w && y < cv->h) cv->px[y * cv->w + x] = (unsigned char)color;
}

static int pixel(const canvas *cv, int x, int y) {
    return x >= 0 && y >= 0 && x < cv->w && y < cv->h ? cv->px[y * cv->w + x] : 0;
}

/* A straight line from (x0,y0) to (x1,y1), by stepping the longer axis one
 * pixel at a time and rounding the other. */
static void line(canvas *cv, int x0, int y0, int x1, int y1) {
    int dx = x1 - x0, dy = y1 - y0;
    int steps = abs(dx) > abs(dy) ? abs(dx) : abs(dy);
    if (steps == 0) {
        plot(cv, x0, y0, 1);
        return;
    }
    for (int i = 0; i <= steps; i++)
        plot(cv, (int)lround(x0 + (double)dx * i / steps), (int)lround(y0 + (double)dy * i / steps), 1);
}

/* A square of the given side centred on (cx,cy), turned by angle radians:
 * its corners lie on the circle of radius side/sqrt(2). */
static void square(canvas *cv, double cx, double cy, double side, double angle) {
    double r = round(side / sqrt(2.0));
    int x[4], y[4];
    for (int i = 0; i < 4; i++) {
        double k = M_PI / 4 + angle + i * M_PI / 2;
        x[i] = (int)lround(cx + r * sin(k));
        y[i] = (int)lround(cy + r * cos(k));
    }
    for (int i = 0; i < 4; i++) line(cv, x[i], y[i], x[(i + 1) % 4], y[(i + 1) % 4]);
}

/* A uniform double in [-m, m]. */
static double jitter(double m) { return (rand_double() * 2 - 1) * m; }

static void schotter(canvas *cv, int per_row, int per_col) {
    int pad = cv->w > 4 ? 2 : 0;
    double side = (double)(cv->w - 2 * pad) / per_row;
    for (int row = 0; row < per_col; row++) {
        double disorder = row > 1 ? (double)row / per_col : 0; /* the first two rows stay straight */
        for (int col = 0; col < per_row; col++) {
            double cx = (int)(col * side + side / 2 + pad), cy = (int)(row * side + side / 2 + pad);
            cx += jitter(disorder) * side / 3;
            cy += jitter(disorder) * side / 3;
            square(cv, cx, cy, side, jitter(disorder));
        }
    }
}

/* Each 2x4 block of pixels as one braille character: dots 1-3 and 7 are
 * the left column top to bottom, 4-6 and 8 the right one. */
static void render_braille(const canvas *cv, strbuf *out) {
    static const int bit[4][2] = {{0, 3}, {1, 4}, {2, 5}, {6, 7}};
    for (int y = 0; y < cv->h; y += 4) {
        for (int x = 0; x < cv->w; x += 2) {
            int b = 0;
            for (int dy = 0; dy < 4; dy++)
                for (int dx = 0; dx < 2; dx++)
                    if (pixel(cv, x + dx, y + dy)) b |= 1 << bit[dy][dx];
            int code = 0x2800 + b;
            strbuf_addf(out, "%c%c%c", 0xE0 | (code >> 12), 0x80 | ((code >> 6) & 0x3F), 0x80 | (code & 0x3F));
        }
        if (y != cv->h - 1) strbuf_addf(out, "\n");
    }
}

/* A tower standing on the bottom row, its roof two pixels narrower on each
 * side; with windows, every other pair of inner columns on every other
 * inner row is lit in a grey other than the wall's. */
static void tower(canvas *cv, int x0, int width, int height, int color, int windows) {
    int bottom = cv->h - 1, top = bottom - height + 1;
    for (int y = bottom; y >= top; y--) {
        for (int x = x0; x < x0 + width; x++) {
            if (y == top && (x <= x0 + 1 || x >= x0 + width - 2)) continue;
            int c = color;
            if (windows && x > x0 + 1 && x < x0 + width - 2 && y > top + 1 && y < bottom - 1) {
                int rx = x - (x0 + 1), ry = y - (top + 1);
                if ((rx / 2) % 2 && ry % 2) c = rx % 2 ? pixel(cv, x - 1, y) : 1 + (int)(rand_below(2));
            }
            plot(cv, x, y, c);
        }
    }
}

static int rnd(int n) { return n > 0 ? (int)rand_below((uint64_t)n) : 0; }

static void skyline(canvas *cv) {
    /* Two rows of plain towers behind, the lighter grey furthest back. */
    for (int color = 2; color >= 1; color--) {
        for (int x = -10; x < cv->w;) {
            x += rnd(8);
            int width = 10 + rnd(9);
            int height = cv->h / 2 + (color == 2 ? rnd(cv->h) / 2 : rnd(cv->h) / 3);
            tower(cv, x, width, height, color, 0);
            x += color == 2 ? width / 2 : width + 1;
        }
    }
    /* Black towers with windows in front. */
    for (int x = -10; x < cv->w;) {
        x += rnd(8);
        int width = 5 + rnd(14);
        tower(cv, x, width, cv->h / 3 + rnd(cv->h) / 2, 0, 1);
        x += width + 5;
    }
}

static void render_ansi(const canvas *cv, strbuf *out) {
    static const char *const esc[] = {"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"};
    for (int y = 0; y < cv->h; y++) {
        for (int x = 0; x < cv->w; x++) strbuf_addf(out, "\033[%s \033[0m", esc[pixel(cv, x, y) & 3]);
        if (y != cv->h - 1) strbuf_addf(out, "\n");
    }
}

static long long clamp(long long v, long long lo, long long hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The optional numeric arguments from argv[first] on into v (defaults
 * kept); -1 after an error reply. */
static int numeric_args(client *c, int first, long long *v, int n) {
    for (int i = 0; i < n && first + i < c->argc; i++)
        if (arg_ll(c, &c->argv[first + i], &v[i]) != 0) return -1;
    return 0;
}

void lolwutCommand(client *c) {
    long long version = 7;
    int first = 1;
    if (c->argc >= 3 && arg_is(&c->argv[1], "version")) {
        if (arg_ll(c, &c->argv[2], &version) != 0) return;
        first = 3;
    }
    strbuf out = {0};
    canvas cv = {0};
    if (version == 5) {
        long long v[3] = {66, 8, 12}; /* columns, squares per row, squares per column */
        if (numeric_args(c, first, v, 3) != 0) return;
        long long cols = clamp(v[0], 1, 1000), per_row = clamp(v[1], 1, 200), per_col = clamp(v[2], 1, 200);
        int w = (int)cols * 2, pad = w > 4 ? 2 : 0;
        int h = (int)((float)(w - pad * 2) / per_row * per_col) + pad * 2;
        if (canvas_init(&cv, w, h, 0) != 0) goto oom;
        schotter(&cv, (int)per_row, (int)per_col);
        render_braille(&cv, &out);
        strbuf_addf(&out, "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. %s\n", GOBLIN_REDIS_VERSION);
    } else if (version == 6) {
        long long v[2] = {80, 20}; /* columns, rows */
        if (numeric_args(c, first, v, 2) != 0) return;
        if (canvas_init(&cv, (int)clamp(v[0], 1, 1000), (int)clamp(v[1], 1, 1000), 3) != 0) goto oom;
        skyline(&cv);
        render_ansi(&cv, &out);
        strbuf_addf(&out,
                    "\nDedicated to the 8 bit game developers of past and present.\n"
                    "Original 8 bit image from Plaguemon by hikikomori. Redis ver. %s\n",
                    GOBLIN_REDIS_VERSION);
    } else {
        strbuf_addf(&out, "Redis ver. %s\n", GOBLIN_REDIS_VERSION);
    }
    reply_verbatim(c, out.p, out.len, "txt");
    free(out.p);
    free(cv.px);
    return;
oom:
    reply_error(c, "ERR out of memory");
}
