/* main.c -- start-up: config -> keyspace -> command table -> workers ->
 * housekeeping -> wait for SHUTDOWN or a signal. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cluster/cluster.h"
#include "cmd/command.h"
#include "cmd/families.h"
#include "cmd/repl/repl.h"
#include "cmd/server/pubsub.h"
#include "db/db.h"
#include "db/object.h"
#include "db/memusage.h"
#include "db/strval.h"
#include "ds/arena.h"
#include "util/hashfn.h"
#include "util/monotime.h"
#include "mem/hugetlb.h"
#include "mem/objstore.h"
#include "net/net.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "base/config.h"
#include "base/log.h"
#include "session/session.h"
#include "base/tls.h"
#include "base/process.h"
#include "base/proctitle.h"
#include "base/oomscore.h"
#include "base/crash.h"
#include "cmd/cron.h"
#include "cmd/repl/repl.h"
#include "cmd/server/script.h"
#include "persist/aof.h"

/* shutdown-on-sigint and shutdown-on-sigterm, as Redis 7.0's: words that
 * add up to flags (default: none, the shutdown SHUTDOWN without options
 * does; save, nosave, now, force: as SHUTDOWN's options), shown in this
 * order. */
enum { SIG_SAVE = 1, SIG_NOSAVE = 2, SIG_NOW = 4, SIG_FORCE = 8 };
static const char *const sig_words[] = {"save", "nosave", "now", "force"};
static int sigint_flags, sigterm_flags; /* atomics */

/* Flags of a value, or -1 with err set. */
static int sig_flags_parse(const char *v, char *err, size_t errlen) {
    int flags = 0, words = 0;
    char copy[256];
    snprintf(copy, sizeof(copy), "%s", v);
    char *save = NULL;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save), words++) {
        int f = strcasecmp(w, "default") == 0 ? 0 : -1;
        for (int i = 0; f < 0 && i < 4; i++)
            if (strcasecmp(w, sig_words[i]) == 0) f = 1 << i;
        if (f < 0) {
            words = 0;
            break;
        }
        flags |= f;
    }
    if (!words || strlen(v) >= sizeof(copy)) {
        snprintf(err, errlen, "argument(s) must be one of the following: default, save, nosave, now, force");
        return -1;
    }
    if ((flags & SIG_SAVE) && (flags & SIG_NOSAVE)) {
        snprintf(err, errlen, "shutdown options SAVE and NOSAVE can't be used simultaneously");
        return -1;
    }
    return flags;
}

static int sig_check(const char *v, char *norm, size_t normlen, char *err, size_t errlen) {
    int flags = sig_flags_parse(v, err, errlen);
    if (flags < 0) return -1;
    snprintf(norm, normlen, "%s", flags ? "" : "default");
    for (int i = 0; i < 4; i++) {
        if (!(flags & (1 << i))) continue;
        size_t n = strlen(norm);
        snprintf(norm + n, normlen - n, "%s%s", n ? " " : "", sig_words[i]);
    }
    return 1;
}

static void sigint_apply(const char *v) {
    char err[128];
    __atomic_store_n(&sigint_flags, sig_flags_parse(v, err, sizeof(err)), __ATOMIC_RELAXED);
}

static void sigterm_apply(const char *v) {
    char err[128];
    __atomic_store_n(&sigterm_flags, sig_flags_parse(v, err, sizeof(err)), __ATOMIC_RELAXED);
}

/* The shutdown a signal asked for runs on a thread of its own, so that the
 * signal thread still hears the next one: a second SIGINT while it is
 * pending or runs (a long save, replicas catching up) exits at once, as
 * Redis's "You insist" does. */
typedef struct sig_job {
    int sig;
    unsigned ticket; /* repl_shutdown_signal_begin */
} sig_job;

static void *sig_shutdown(void *arg) {
    sig_job job = *(sig_job *)arg;
    free(arg);
    int sig = job.sig;
    int flags = __atomic_load_n(sig == SIGINT ? &sigint_flags : &sigterm_flags, __ATOMIC_RELAXED);
    /* As SHUTDOWN with the options of shutdown-on-<signal>: lagging
     * replicas catch up first unless now (SHUTDOWN ABORT stops it), save
     * when save points are configured (or save, not nosave); a failed
     * save keeps the server running, as Redis does, unless force. Redis
     * acts on the signal from its cron: while DEBUG PAUSE-CRON holds it,
     * the shutdown waits, and SHUTDOWN ABORT drops it. */
    int go = repl_shutdown_signal_wait(job.ticket, cron_is_paused) == 0;
    if (go && !(flags & SIG_NOW) && repl_shutdown_grace(NULL) != 0) go = 0;
    if (go) {
        repl_shutdown_report();
        char err[600];
        int how = (flags & SIG_SAVE)     ? PERSIST_SHUTDOWN_SAVE
                  : (flags & SIG_NOSAVE) ? PERSIST_SHUTDOWN_NOSAVE
                                         : PERSIST_SHUTDOWN_DEFAULT;
        if (persist_shutdown(how, err, sizeof(err)) != 0 && !(flags & SIG_FORCE)) {
            persist_shutdown_cancelled(); /* logs it, as Redis's finishShutdown */
            repl_shutdown_grace_end();
            go = 0;
        }
    }
    if (go) net_request_shutdown();
    else repl_shutdown_signal_end(job.ticket);
    return NULL;
}

static void *signal_thread(void *arg) {
    sigset_t *set = arg;
    for (;;) {
        int sig;
        if (sigwait(set, &sig) != 0) continue;
        const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
        if (repl_shutdown_signal_active() && sig == SIGINT) {
            log_warn("You insist... exiting now.");
            char tmp[PATH_MAX];
            rdb_temp_path(tmp, sizeof(tmp), cfg.dbfilename, (long)getpid());
            unlink(tmp); /* the save the shutdown was writing */
            fflush(NULL);
            _exit(1); /* not a clean shutdown */
        }
        log_warn("Received %s scheduling shutdown...", name);
        if (repl_shutdown_signal_active()) continue; /* a SIGTERM while one is under way */
        /* The server exits already (SHUTDOWN saved, or chose not to): a
         * second shutdown would save again, at a later stream offset. */
        if (persist_shutdown_decided()) continue;
        unsigned ticket = repl_shutdown_signal_begin();
        if (!ticket) continue; /* one began meanwhile */
        sig_job *job = malloc(sizeof(*job));
        if (!job) abort();
        job->sig = sig;
        job->ticket = ticket;
        /* The new thread owns job (and frees it) from here on. */
        pthread_t t;
        int e = pthread_create(&t, NULL, sig_shutdown, job);
        if (e != 0) {
            log_warn("Can't start the shutdown %s asked for: %s", name, strerror(e));
            repl_shutdown_signal_end(ticket);
            free(job);
            continue;
        }
        pthread_detach(t);
    }
    return NULL;
}

/* Modules above base/ that own directives join the configuration before it
 * is read: the object store keeps its settings in objstore_cfg, Pub/Sub
 * checks and follows notify-keyspace-events. (ACL follows requirepass from
 * its family init.) */
static void config_owners_register(void) {
    static const struct {
        const char *name;
        long long *v;
    } ll[] = {
        {"memory", &objstore_cfg.memory},   {"sub-memory", &objstore_cfg.sub_memory},
        {"small-memory", &objstore_cfg.small_memory}, {"small-sub-memory", &objstore_cfg.small_sub_memory},
        {"block", &objstore_cfg.block},     {"ram-head", &objstore_cfg.ram_head},
        {"io-chunk", &objstore_cfg.io_chunk}, {"write-io-chunk", &objstore_cfg.write_io_chunk},
        {"numa", &objstore_cfg.numa},       {"numa-decay-interval", &objstore_cfg.numa_decay_ms},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof(ll) / sizeof(ll[0]); i++) rc |= config_bind_ll(ll[i].name, ll[i].v);
    rc |= config_bind_string("ssd-dir", &objstore_cfg.ssd_dir);
    rc |= config_bind_int("no-numa-promotion", &objstore_cfg.no_numa_promotion);
    rc |= config_bind_int("perverse", &objstore_cfg.perverse);
    if (rc) {
        fprintf(stderr, "goblin-core: the object store's settings do not match the config table\n");
        abort();
    }
    pubsub_config_register();
    session_evict_config_register();
    repl_replicaof_config_register();
    proctitle_config_register();
    crash_config_register();
    oomscore_config_register();
    static const config_hook sigint_hook = {sig_check, sigint_apply, NULL};
    static const config_hook sigterm_hook = {sig_check, sigterm_apply, NULL};
    if (config_register_hook("shutdown-on-sigint", &sigint_hook) != 0 ||
        config_register_hook("shutdown-on-sigterm", &sigterm_hook) != 0)
        abort();
}

/* Started as goblin-store (a link to goblin-core): the cache-mode defaults.
 * The HTTP listener is on, port 8080, unless a flag or the file says
 * otherwise; the memcache listener keeps goblin-core's default (on, with
 * the memcache front-end; --no-memcache turns it off); no save points (a
 * cache refills from its origin), where goblin-core has Redis's. */
static int started_as_store(const char *argv0) {
    const char *b = strrchr(argv0, '/');
    return strcmp(b ? b + 1 : argv0, "goblin-store") == 0;
}

static void store_defaults(void) {
    if (config_set_default("http-port", "8080") != 0) abort();
    if (config_set_default("save", "") != 0) abort();
}

/* The start-up logo, as Redis shows its own: with always-show-logo yes,
 * or when the log is a terminal (standard output, no syslog). */
static void show_logo(void) {
    char *v = config_value("always-show-logo");
    int always = v && !strcmp(v, "yes");
    free(v);
    int tty = isatty(STDOUT_FILENO) && !cfg.syslog_enabled && !(cfg.logfile && cfg.logfile[0]);
    if (!always && !tty) return;
    char text[1024];
    snprintf(text, sizeof(text),
             "\n"
             "      ,      ,       goblin-core %s (Redis %s compatible) %d bit\n"
             "     /(.-\"\"-.)\\      Running in %s mode\n"
             " |\\  \\/      \\/  /|  Port: %d\n"
             " | \\ / =.  .= \\ / |  PID: %d\n"
             "  \\( \\   o\\/o   / )/\n"
             "   \\_, '-/  \\-' ,_/\n"
             "     /   \\__/   \\\n"
             "     \\ \\__/\\__/ /\n"
             "   ___\\ \\|--|/ /___\n"
             "\n",
             GOBLIN_VERSION, GOBLIN_REDIS_VERSION, (int)(sizeof(void *) * 8),
             cluster_enabled() ? "cluster" : "standalone", cfg.port, (int)getpid());
    log_raw(LOG_NOTICE_L, text);
}

static void usage(void) {
    printf("Usage: goblin-core [/path/to/redis-compat.conf] [--name value ...]\n"
           "       goblin-core --version\n"
           "Every config directive is also a flag, e.g. --port 6380 --cores 2.\n");
}

int main(int argc, char **argv) {
    if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
        printf("goblin-core v=%s (Redis %s compatible)\n", GOBLIN_VERSION, GOBLIN_REDIS_VERSION);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage();
        return 0;
    }
    if (argc > 0 && started_as_store(argv[0])) store_defaults();
    config_owners_register();
    tls_config_register();
    cron_config_register();
    obj_config_register();
    if (config_load(argc, argv) != 0) return 1;
    {
        char *thp = config_value("disable-thp");
        int off = thp && !strcmp(thp, "yes");
        free(thp);
        if (off && process_disable_thp() < 0)
            fprintf(stderr, "goblin-core: WARNING transparent huge pages are on and could not be turned off for "
                            "this process (prctl PR_SET_THP_DISABLE)\n");
    }
    {
        char oerr[512];
        if (objstore_validate(&objstore_cfg, oerr, sizeof(oerr)) != 0) {
            fprintf(stderr, "goblin-core: %s\n", oerr);
            return 1;
        }
    }
    uint64_t seed;
    if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    hash_set_seed(seed);
    monotime_init();
    unsigned char rid[20];
    if (getrandom(rid, sizeof(rid), 0) != sizeof(rid)) memset(rid, 7, sizeof(rid));
    for (int i = 0; i < 20; i++) snprintf(srv.run_id + 2 * i, 3, "%02x", rid[i]);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    srv.start_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    srv.lastsave = ts.tv_sec;
    ssize_t el = readlink("/proc/self/exe", srv.executable, sizeof(srv.executable) - 1);
    if (el > 0) srv.executable[el] = '\0';

    if (cfg.daemonize) {
        if (daemon(1, 0) != 0) {
            perror("daemon");
            return 1;
        }
    }
    proctitle_init(argc, argv); /* argv is the title's from here on */
    oomscore_init();
    log_open();
    /* io-threads: a Redis config's threads for client I/O. Goblin's workers
     * each serve their connections whole (reads, commands, writes), so that
     * many workers is what it asks for, unless cores says otherwise. */
    if (cfg.io_threads > 1 && cfg.cores == 1) {
        cfg.cores = cfg.io_threads;
        log_notice("io-threads %d: %d workers (cores %d); each reads and writes its own connections", cfg.io_threads,
                   cfg.cores, cfg.cores);
    }
    if (cfg.pidfile && cfg.pidfile[0]) {
        FILE *pf = fopen(cfg.pidfile, "w");
        if (pf) {
            fprintf(pf, "%d\n", (int)getpid());
            fclose(pf);
        }
    }

    /* Signals go to one thread; workers never see them. */
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (arena_set_default_chunk((size_t)cfg.arena_chunk) != 0) {
        fprintf(stderr, "goblin-core: invalid --arena-chunk %lld\n", cfg.arena_chunk);
        return 1;
    }
    hugetlb_set_enabled(cfg.arena_hugetlb);
    if (cfg.arena_hugetlb) {
        long total = 0, free_pages = 0;
        hugetlb_pool_pages(&total, &free_pages);
        if (free_pages <= 0)
            log_warn("arena-hugetlb is on but the HugeTLB pool is empty (vm.nr_hugepages=%ld): full arena blocks "
                     "fall back to 4 KiB pages until it is filled (sysctl -w vm.nr_hugepages=N)",
                     total);
        else
            log_notice("arena-hugetlb: %ld of %ld huge pages free; BGSAVE is disabled while it is on", free_pages,
                       total);
    }
    {
        /* The object store: head pools (bound to --numa, HugeTLB first),
         * the small-object arena and the SSD tail directory. Binding here
         * makes the workers started below inherit the node. */
        char oerr[512];
        if (objstore_init(oerr, sizeof(oerr)) != 0) {
            fprintf(stderr, "goblin-core: %s\n", oerr);
            log_warn("%s", oerr);
            return 1;
        }
    }
    cluster_preinit(); /* cluster-enabled: the keyspace keeps its hash slots */
    db_init_all(cfg.databases);
    cmd_table_init();
    families_register();
    for (int i = 0; i < cfg.nrenames; i++) {
        char rerr[200], line[600];
        if (cmd_rename(cfg.renames[2 * i], cfg.renames[2 * i + 1], rerr, sizeof(rerr)) != 0) {
            snprintf(line, sizeof(line), "rename-command %s %s", cfg.renames[2 * i], cfg.renames[2 * i + 1]);
            config_report_error(0, line, rerr);
            log_warn("%s: %s", line, rerr);
            return 1;
        }
    }
    {
        char cerr[512];
        if (cluster_init(cerr, sizeof(cerr)) != 0) {
            fprintf(stderr, "goblin-core: %s\n", cerr);
            log_warn("%s", cerr);
            return 1;
        }
    }
    strval_set_command_scoped(1);
    srv.used_memory_startup = memusage_used();

    log_notice("goblin-core %s starting, pid=%d, Redis %s compatible", GOBLIN_VERSION, (int)getpid(),
               GOBLIN_REDIS_VERSION);
    show_logo();
    /* A dump to load: -LOADING from the first command the workers get. */
    persist_loading_begin();
    if (tls_init() != 0) return 1;
    if (net_start(cfg.cores) != 0) return 1;
    log_notice("Ready to accept connections tcp on port %d with %d worker(s), network I/O: %s", cfg.port, cfg.cores,
               net_io_mode());
    pthread_t st;
    pthread_create(&st, NULL, signal_thread, &set);
    pthread_detach(st);
    /* Load dir/dbfilename while the workers answer -LOADING; a corrupt
     * file stops start-up (never silently start empty). */
    char lerr[1400];
    int lrc = persist_load_at_startup(lerr, sizeof(lerr));
    if (lrc < 0) {
        if (lrc != PERSIST_LOAD_FAILED_LOGGED) log_warn("%s", lerr);
        fprintf(stderr, "goblin-core: %s\n", lerr);
        families_shutdown();
        net_stop();
        return 1;
    }
    cron_start();
    repl_start(); /* a configured replicaof: follow the primary now */
    char *sup_mode = config_value("supervised");
    int sup = process_supervision(sup_mode);
    free(sup_mode);
    if (sup != PROCESS_SUPERVISED_NONE &&
        process_supervised_ready(sup, repl_is_replica() ? "Ready to accept connections in read-only mode. Waiting for "
                                                          "MASTER <-> REPLICA sync"
                                                        : "Ready to accept connections") != 0)
        log_warn("supervised %s: the supervisor could not be told that the server is ready",
                 sup == PROCESS_SUPERVISED_SYSTEMD ? "systemd (NOTIFY_SOCKET)" : "upstart (UPSTART_JOB)");

    net_wait();
    process_notify(sup, "STOPPING=1\n");
    log_warn("User requested shutdown...");
    int is_eval;
    int64_t since;
    if (script_running(&is_eval, &since)) {
        /* SHUTDOWN NOSAVE while a script runs (as Redis, which exits from
         * inside it): the script's worker and whoever waits for the
         * keyspace will never be joined. Leave now, the AOF written. */
        aof_stop();
        net_stop_within(200);
        if (cfg.pidfile && cfg.pidfile[0]) unlink(cfg.pidfile);
        log_warn("Goblin is now ready to exit, bye bye...");
        fflush(NULL);
        _exit(0);
    }
    cron_stop();
    families_shutdown();
    net_stop();
    if (cfg.pidfile && cfg.pidfile[0]) unlink(cfg.pidfile);
    log_warn("Goblin is now ready to exit, bye bye...");
    return 0;
}
