/* admin_latency.c -- SLOWLOG and LATENCY.
 *
 * The slow log itself lives in slowlog.c (the dispatcher feeds it); this file
 * is only its command front-end. The latency monitor is here: a handful of
 * named events (few: "command", "fast-command", "expire-cycle", ...), each a
 * ring of LATENCY_TS_LEN one-per-second samples plus its all-time maximum,
 * as Redis keeps them. Samples arrive from any worker through
 * latency_add_sample_if_needed(), which returns at once when the monitor is
 * off (latency-monitor-threshold 0), so the dispatcher may call it for every
 * command. One mutex guards the store; it is taken only for samples that
 * cross the threshold and by the LATENCY command. */
#include <math.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd/server/admin_family.h"
#include "cmd/families.h"
#include "session/reply.h"
#include "cmd/slowlog.h"
#include "base/config.h"
#include "util/lathist.h"
#include "util/strbuf.h"

/* ---- SLOWLOG ----------------------------------------------------------- */

void slowlogGetCommand(client *c) {
    long long count = 10;
    if (c->argc > 3) {
        admin_reply_subcommand_syntax(c, "SLOWLOG");
        return;
    }
    if (c->argc == 3 &&
        arg_ll_range(c, &c->argv[2], &count, -1, __LONG_MAX__, "ERR count should be greater than or equal to -1") != 0)
        return;
    slowlog_reply(c, (long)count);
}

void slowlogLenCommand(client *c) { reply_int(c, slowlog_len()); }

void slowlogResetCommand(client *c) {
    slowlog_reset();
    reply_ok(c);
}

void slowlogHelpCommand(client *c) {
    static const char *const help[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        NULL,
    };
    admin_reply_help(c, "SLOWLOG", help);
}

/* ---- Latency event store ----------------------------------------------- */

#define LATENCY_TS_LEN 160
#define LATENCY_MAX_EVENTS 32
#define LATENCY_GRAPH_COLS 80

typedef struct latency_sample {
    int32_t time;      /* unix seconds, 0 = unused */
    uint32_t latency;  /* ms */
} latency_sample;

typedef struct latency_series {
    char name[48];
    int idx;           /* next slot to write */
    uint32_t max;
    latency_sample samples[LATENCY_TS_LEN];
} latency_series;

static pthread_mutex_t lat_lock = PTHREAD_MUTEX_INITIALIZER;
static latency_series *lat_events[LATENCY_MAX_EVENTS];
static int lat_nevents;

static latency_series *do_latency_find(const char *name, size_t len) {
    for (int i = 0; i < lat_nevents; i++)
        if (strlen(lat_events[i]->name) == len && memcmp(lat_events[i]->name, name, len) == 0) return lat_events[i];
    return NULL;
}

void latency_add_sample_if_needed(const char *event, long long ms) {
    long long threshold = __atomic_load_n(&cfg.latency_monitor_threshold, __ATOMIC_RELAXED);
    if (!threshold || ms < threshold) return;
    int32_t now = (int32_t)time(NULL);
    uint32_t lat = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    pthread_mutex_lock(&lat_lock);
    latency_series *ts = do_latency_find(event, strlen(event));
    if (!ts && lat_nevents < LATENCY_MAX_EVENTS) {
        ts = calloc(1, sizeof(*ts));
        if (ts) {
            snprintf(ts->name, sizeof(ts->name), "%s", event);
            lat_events[lat_nevents++] = ts;
        }
    }
    if (ts) {
        if (lat > ts->max) ts->max = lat;
        /* One sample per second: a later spike in the same second raises it. */
        int prev = (ts->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
        if (ts->samples[prev].time == now) {
            if (lat > ts->samples[prev].latency) ts->samples[prev].latency = lat;
        } else {
            ts->samples[ts->idx].time = now;
            ts->samples[ts->idx].latency = lat;
            ts->idx = (ts->idx + 1) % LATENCY_TS_LEN;
        }
    }
    pthread_mutex_unlock(&lat_lock);
}

/* ---- LATENCY ----------------------------------------------------------- */

void latencyLatestCommand(client *c) {
    pthread_mutex_lock(&lat_lock);
    reply_array(c, lat_nevents);
    for (int i = 0; i < lat_nevents; i++) {
        latency_series *ts = lat_events[i];
        int last = (ts->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
        reply_array(c, 4);
        reply_bulk_cstr(c, ts->name);
        reply_int(c, ts->samples[last].time);
        reply_int(c, ts->samples[last].latency);
        reply_int(c, ts->max);
    }
    pthread_mutex_unlock(&lat_lock);
}

void latencyHistoryCommand(client *c) {
    pthread_mutex_lock(&lat_lock);
    latency_series *ts = do_latency_find(c->argv[2].p, c->argv[2].n);
    if (!ts) {
        reply_array(c, 0);
    } else {
        long n = 0;
        for (int j = 0; j < LATENCY_TS_LEN; j++) n += ts->samples[j].time != 0;
        reply_array(c, n);
        for (int j = 0; j < LATENCY_TS_LEN; j++) {
            const latency_sample *s = &ts->samples[(ts->idx + j) % LATENCY_TS_LEN];
            if (!s->time) continue;
            reply_array(c, 2);
            reply_int(c, s->time);
            reply_int(c, s->latency);
        }
    }
    pthread_mutex_unlock(&lat_lock);
}

void latencyResetCommand(client *c) {
    long resets = 0;
    pthread_mutex_lock(&lat_lock);
    if (c->argc == 2) {
        for (int i = 0; i < lat_nevents; i++) free(lat_events[i]);
        resets = lat_nevents;
        lat_nevents = 0;
    } else {
        for (int j = 2; j < c->argc; j++) {
            latency_series *ts = do_latency_find(c->argv[j].p, c->argv[j].n);
            if (!ts) continue;
            for (int i = 0; i < lat_nevents; i++)
                if (lat_events[i] == ts) lat_events[i] = lat_events[--lat_nevents];
            free(ts);
            resets++;
        }
    }
    pthread_mutex_unlock(&lat_lock);
    reply_int(c, resets);
}

/* A growable text buffer for the graph and the doctor's report. */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void text_catlen(text *t, const char *s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        if (!t->p) abort();
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void text_cat(text *t, const char *s) { text_catlen(t, s, strlen(s)); }

static void text_catf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_catf(text *t, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > 0) text_catlen(t, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* The sparkline Redis draws for LATENCY GRAPH: `rows` rows of "_o#|" bars
 * scaled between the smallest and largest sample, then each sample's label
 * ("12s", "3m", ...) written vertically under it. */
typedef struct spark_sample {
    double value;
    char label[24];
} spark_sample;

static void sparkline_render_range(text *out, const spark_sample *s, int n, double min, double max, int rows,
                                   int labels) {
    static const char fill[] = "_o#";
    const int charset_len = 3, label_margin_top = 1;
    double relmax = max - min;
    if (relmax == 0) relmax = 1;
    int steps = charset_len * rows;
    char chars[LATENCY_GRAPH_COLS];
    for (int row = 0;; row++) {
        int loop = 0;
        memset(chars, ' ', (size_t)n);
        for (int i = 0; i < n; i++) {
            int step = (int)((s[i].value - min) * steps / relmax);
            if (step < 0) step = 0;
            if (step >= steps) step = steps - 1;
            if (row < rows) {
                int charidx = step - ((rows - row - 1) * charset_len);
                loop = 1;
                if (charidx >= 0 && charidx < charset_len) chars[i] = fill[charidx];
                else if (charidx >= charset_len) chars[i] = '|';
            } else {
                if (labels && row - rows < label_margin_top) {
                    loop = 1;
                    break;
                }
                int label_char = row - rows - label_margin_top;
                if ((int)strlen(s[i].label) > label_char) {
                    loop = 1;
                    chars[i] = s[i].label[label_char];
                }
            }
        }
        if (!loop) break;
        text_catlen(out, chars, (size_t)n);
        text_cat(out, "\n");
    }
}

void latencyGraphCommand(client *c) {
    pthread_mutex_lock(&lat_lock);
    latency_series *ts = do_latency_find(c->argv[2].p, c->argv[2].n);
    if (!ts) {
        pthread_mutex_unlock(&lat_lock);
        reply_errorf(c, "ERR No samples available for event '%.*s'", (int)c->argv[2].n, c->argv[2].p);
        return;
    }
    spark_sample seq[LATENCY_TS_LEN];
    int n = 0;
    uint32_t min = 0, max = 0;
    time_t now = time(NULL);
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        const latency_sample *s = &ts->samples[(ts->idx + j) % LATENCY_TS_LEN];
        if (!s->time) continue;
        if (n == 0) min = max = s->latency;
        if (s->latency > max) max = s->latency;
        if (s->latency < min) min = s->latency;
        long elapsed = (long)(now - s->time);
        if (elapsed < 0) elapsed = 0;
        if (elapsed < 60) snprintf(seq[n].label, sizeof(seq[n].label), "%lds", elapsed);
        else if (elapsed < 3600) snprintf(seq[n].label, sizeof(seq[n].label), "%ldm", elapsed / 60);
        else if (elapsed < 3600 * 24) snprintf(seq[n].label, sizeof(seq[n].label), "%ldh", elapsed / 3600);
        else snprintf(seq[n].label, sizeof(seq[n].label), "%ldd", elapsed / (3600 * 24));
        seq[n++].value = s->latency;
    }
    text g = {0};
    text_catf(&g, "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", ts->name, (unsigned long)max,
              (unsigned long)min, (unsigned long)ts->max);
    pthread_mutex_unlock(&lat_lock);
    for (int j = 0; j < LATENCY_GRAPH_COLS; j++) text_cat(&g, "-");
    text_cat(&g, "\n");
    for (int j = 0; j < n; j += LATENCY_GRAPH_COLS) {
        int sub = n - j < LATENCY_GRAPH_COLS ? n - j : LATENCY_GRAPH_COLS;
        if (j) text_cat(&g, "\n");
        sparkline_render_range(&g, seq + j, sub, min, max, 4, n > 0);
    }
    reply_verbatim(c, g.p, g.len, "txt");
    free(g.p);
}

/* Sum of AnonHugePages over the process mappings, in bytes. */
static long long thp_anon_bytes(void) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    char line[256];
    long long total = 0;
    while (fgets(line, sizeof(line), f)) {
        long long kb;
        if (strncmp(line, "AnonHugePages:", 14) == 0 && sscanf(line + 14, "%lld", &kb) == 1) total += kb * 1024;
    }
    fclose(f);
    return total;
}

/* LATENCY DOCTOR: per-event statistics and the advice that applies, in
 * Redis's words, for the events Goblin records. */
void latencyDoctorCommand(client *c) {
    text r = {0};
    long long threshold = cfg.latency_monitor_threshold;
    pthread_mutex_lock(&lat_lock);
    if (lat_nevents == 0 && threshold == 0) {
        pthread_mutex_unlock(&lat_lock);
        text_cat(&r, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may "
                     "use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we "
                     "weren't in a deep space mission I'd suggest to take a look at "
                     "https://redis.io/topics/latency-monitor.\n");
        reply_verbatim(c, r.p, r.len, "txt");
        free(r.p);
        return;
    }
    int advices = 0, adv_slowlog_enabled = 0, adv_slowlog_tuning = 0, adv_slowlog_inspect = 0;
    int adv_large_objects = 0, adv_scheduler = 0, adv_hz = 0, adv_thp = 0;
    time_t now = time(NULL);
    for (int e = 0; e < lat_nevents; e++) {
        latency_series *ts = lat_events[e];
        if (e == 0)
            text_cat(&r, "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about "
                         "it, do you Dave?\n\n");
        unsigned long long sum = 0, mad = 0, avg = 0;
        int samples = 0;
        long long oldest = 0;
        for (int j = 0; j < LATENCY_TS_LEN; j++) {
            const latency_sample *s = &ts->samples[j];
            if (!s->time) continue;
            samples++;
            sum += s->latency;
            if (!oldest || s->time < oldest) oldest = s->time;
        }
        long long period = 0;
        if (samples) {
            avg = sum / (unsigned)samples;
            period = (long long)now - oldest;
            if (period == 0) period = 1;
            for (int j = 0; j < LATENCY_TS_LEN; j++) {
                if (!ts->samples[j].time) continue;
                long long d = (long long)avg - ts->samples[j].latency;
                mad += (unsigned long long)(d < 0 ? -d : d);
            }
            mad /= (unsigned)samples;
        }
        text_catf(&r,
                  "%d. %s: %d latency spikes (average %llums, mean deviation %llums, period %.2f sec). Worst all "
                  "time event %lums.",
                  e + 1, ts->name, samples, avg, mad, samples ? (double)period / samples : NAN,
                  (unsigned long)ts->max);
        if (!strcasecmp(ts->name, "command")) {
            if (cfg.slowlog_log_slower_than < 0 || cfg.slowlog_max_len == 0) {
                adv_slowlog_enabled = 1;
                advices++;
            } else if (cfg.slowlog_log_slower_than / 1000 > threshold) {
                adv_slowlog_tuning = 1;
                advices++;
            }
            adv_slowlog_inspect = 1;
            adv_large_objects = 1;
            advices += 2;
        }
        if (!strcasecmp(ts->name, "fast-command")) {
            adv_scheduler = 1;
            advices++;
        }
        if (!strcasecmp(ts->name, "expire-cycle")) {
            adv_hz = 1;
            adv_large_objects = 1;
            advices += 2;
        }
        text_cat(&r, "\n");
    }
    int nevents = lat_nevents;
    pthread_mutex_unlock(&lat_lock);
    if (thp_anon_bytes() > 0) {
        adv_thp = 1;
        advices++;
    }
    if (nevents == 0 && advices == 0) {
        text_cat(&r, "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
                     "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think "
                     "things over.\n");
    } else if (nevents > 0 && advices == 0) {
        text_cat(&r, "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the "
                     "Redis community to get some help, providing this report in your help request.\n");
    } else {
        text_cat(&r, "\nI have a few advices for you:\n\n");
        if (adv_slowlog_enabled)
            text_catf(&r,
                      "- There are latency issues with potentially slow commands you are using. Try to enable the "
                      "Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %llu'. If the "
                      "Slow log is disabled Redis is not able to log slow commands execution for you.\n",
                      (unsigned long long)threshold * 1000);
        if (adv_slowlog_tuning)
            text_catf(&r,
                      "- Your current Slow Log configuration only logs events that are slower than your configured "
                      "latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %llu'.\n",
                      (unsigned long long)threshold * 1000);
        if (adv_slowlog_inspect)
            text_cat(&r, "- Check your Slow Log to understand what are the commands you are running which are too "
                         "slow to execute. Please check https://redis.io/commands/slowlog for more information.\n");
        if (adv_scheduler)
            text_cat(&r, "- The system is slow to execute Redis code paths not containing system calls. This usually "
                         "means the system does not provide Redis CPU time to run for long periods. You should try "
                         "to:\n"
                         "  1) Lower the system load.\n"
                         "  2) Use a computer / VM just for Redis if you are running other software in the same "
                         "system.\n"
                         "  3) Check if you have a \"noisy neighbour\" problem.\n"
                         "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your "
                         "system.\n"
                         "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if "
                         "you are using Jemalloc. However this may create fragmentation problems.\n");
        if (adv_hz && cfg.hz < 100)
            text_cat(&r, "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' "
                         "configuration parameter to 100 using 'CONFIG SET hz 100'.\n");
        if (adv_large_objects)
            text_cat(&r, "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking "
                         "operation. If you have very large objects that are often deleted, expired, or evicted, try "
                         "to fragment those objects into multiple smaller objects.\n");
        if (adv_thp)
            text_cat(&r, "- I detected a non zero amount of anonymous huge pages used by your process. This creates "
                         "very serious latency events in different conditions, especially when Redis is persisting "
                         "on disk. To disable THP support use the command 'echo never > "
                         "/sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it to /etc/rc.local so "
                         "that the command will be executed again after a reboot. Note that even if you have already "
                         "disabled THP, you still need to restart the Redis process to get rid of the huge pages "
                         "already created.\n");
    }
    reply_verbatim(c, r.p, r.len, "txt");
    free(r.p);
}

void latencyHelpCommand(client *c) {
    static const char *const help[] = {
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
        "    If no commands are specified then all histograms are replied.",
        NULL,
    };
    admin_reply_help(c, "LATENCY", help);
}

/* ---- Per-command latency histograms (latency-tracking) ------------------
 *
 * The dispatcher counts every call in its thread's histogram of the command
 * (cmd_latency_hist adds them up). LATENCY HISTOGRAM prints a command's
 * cumulative distribution at power-of-two microsecond levels; INFO
 * latencystats prints the percentiles latency-tracking-info-percentiles
 * lists. Both skip commands without a counted call, as Redis does. */

static uint64_t hist_counts[LATHIST_LEN]; /* guarded by hist_lock */
static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;

static void cdf_pair(void *arg, int64_t usec, uint64_t cum) {
    client *c = arg;
    reply_int(c, usec);
    reply_int(c, (long long)cum);
}

/* name -> {calls, histogram_usec}; returns 0 when d has no histogram. */
static int reply_command_cdf(client *c, const cmd_def *d) {
    uint64_t total;
    pthread_mutex_lock(&hist_lock);
    if (!cmd_latency_hist(d, hist_counts, &total)) {
        pthread_mutex_unlock(&hist_lock);
        return 0;
    }
    reply_bulk_cstr(c, d->fullname);
    reply_map(c, 2);
    reply_bulk_cstr(c, "calls");
    reply_int(c, (long long)total);
    reply_bulk_cstr(c, "histogram_usec");
    size_t h = reply_defer(c);
    int n = lathist_cdf(hist_counts, total, cdf_pair, c);
    reply_defer_map(c, h, n);
    pthread_mutex_unlock(&hist_lock);
    return 1;
}

static int reply_command_and_subs(client *c, const cmd_def *d) {
    int n = reply_command_cdf(c, d);
    for (int i = 0; i < d->nsubs; i++) n += reply_command_cdf(c, d->subs[i]);
    return n;
}

typedef struct cdf_all {
    client *c;
    int n;
} cdf_all;

static void cdf_all_cb(void *arg, const cmd_def *d) {
    cdf_all *a = arg;
    a->n += reply_command_and_subs(a->c, d);
}

void latencyHistogramCommand(client *c) {
    size_t h = reply_defer(c);
    int n = 0;
    if (c->argc == 2) {
        cdf_all a = {c, 0};
        cmd_each(cdf_all_cb, &a);
        n = a.n;
    }
    for (int i = 2; i < c->argc; i++) {
        /* A name as COMMAND INFO takes it ("config|get" too); a container
         * brings its subcommands; unknown names are skipped. */
        const cmd_def *d = cmd_lookup(c->argv[i].p, c->argv[i].n);
        if (!d) continue;
        n += d->parent ? reply_command_cdf(c, d) : reply_command_and_subs(c, d);
    }
    reply_defer_map(c, h, n);
}

/* latency-tracking-info-percentiles: the parsed list, replaced whole under
 * config_lock by the apply hook and read under it by INFO. */
#define MAX_PERCENTILES 64
static double percentiles[MAX_PERCENTILES];
static int npercentiles;

/* A percentile as Redis prints it: "%f" without trailing zeros. */
static void format_percentile(char *buf, size_t len, double p) {
    snprintf(buf, len, "%f", p);
    char *dot = strchr(buf, '.');
    if (!dot) return;
    char *end = buf + strlen(buf) - 1;
    while (end > dot && *end == '0') *end-- = '\0';
    if (end == dot) *end = '\0';
}

static int parse_percentiles(const char *v, double *out, int *n, char *err, size_t errlen) {
    *n = 0;
    const char *p = v;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char tok[64];
        char *end;
        if (len >= sizeof(tok)) len = sizeof(tok) - 1;
        memcpy(tok, p, len);
        tok[len] = '\0';
        double d = strtod(tok, &end);
        if (end == tok || *end || isnan(d)) {
            snprintf(err, errlen, "Invalid latency-tracking-info-percentiles parameters");
            return -1;
        }
        if (d < 0.0 || d > 100.0) {
            snprintf(err, errlen, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
            return -1;
        }
        if (*n == MAX_PERCENTILES) {
            snprintf(err, errlen, "Too many latency-tracking-info-percentiles parameters");
            return -1;
        }
        out[(*n)++] = d;
        p += len;
    }
    return 0;
}

static int percentiles_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    double p[MAX_PERCENTILES];
    int n;
    if (parse_percentiles(v, p, &n, err, errlen) != 0) return -1;
    size_t off = 0;
    norm[0] = '\0';
    for (int i = 0; i < n && off < normlen; i++) {
        char b[64];
        format_percentile(b, sizeof(b), p[i]);
        off += (size_t)snprintf(norm + off, normlen - off, "%s%s", i ? " " : "", b);
    }
    return 1;
}

static void percentiles_apply(const char *v) {
    char err[128];
    double p[MAX_PERCENTILES];
    int n;
    if (parse_percentiles(v, p, &n, err, sizeof(err)) != 0) return; /* checked before */
    memcpy(percentiles, p, sizeof(double) * (size_t)n);
    npercentiles = n;
}

void admin_family_init(void) {
    static const config_hook hook = {percentiles_check, percentiles_apply};
    admin_flush_config_register();
    config_register_hook("latency-tracking-info-percentiles", &hook);
}

static void latencystats_line(strbuf *b, const cmd_def *d) {
    uint64_t total;
    if (!cmd_latency_hist(d, hist_counts, &total)) return;
    strbuf_addf(b, "latency_percentiles_usec_%s:", d->fullname);
    for (int i = 0; i < npercentiles; i++) {
        char pb[64];
        format_percentile(pb, sizeof(pb), percentiles[i]);
        double us = (double)lathist_percentile(hist_counts, total, percentiles[i]) / 1000.0;
        strbuf_addf(b, "%sp%s=%.3f", i ? "," : "", pb, us);
    }
    strbuf_addf(b, "\r\n");
}

static void latencystats_cb(void *arg, const cmd_def *d) {
    latencystats_line(arg, d);
    for (int i = 0; i < d->nsubs; i++) latencystats_line(arg, d->subs[i]);
}

void latency_info_latencystats(strbuf *b) {
    strbuf_addf(b, "# Latencystats\r\n");
    config_lock();
    pthread_mutex_lock(&hist_lock);
    cmd_each(latencystats_cb, b);
    pthread_mutex_unlock(&hist_lock);
    config_unlock();
}
