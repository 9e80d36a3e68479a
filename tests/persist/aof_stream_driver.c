/* aof_stream_driver.c -- drives the write stream directly (the command
 * layer does not append yet): four threads append SET records for
 * databases 0..2 and, under appendfsync always, wait with aof_durable_state() after
 * each, as conn.c does before sending replies. Linked by test_aof.py
 * against the objects of build-release; run with goblin-core's flags. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base/config.h"
#include "db/db.h"
#include "persist/aof.h"
#include "persist/wstream.h"
static void *worker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < 2000; i++) {
        char k[32], v[32];
        snprintf(k, sizeof k, "k%ld:%d", id, i); snprintf(v, sizeof v, "%d", i);
        const char *p[3] = {"SET", k, v}; size_t n[3] = {3, strlen(k), strlen(v)};
        wstream_lock(); wstream_append_locked((int)(id % 3), 3, p, n); wstream_unlock();
        uint64_t need = aof_durable_take();
        int st;
        while (need && (st = aof_durable_state(need)) == 0) usleep(50);
        if (need && st < 0) { printf("durable err\n"); }
    }
    return NULL;
}
int main(int argc, char **argv) {
    if (config_load(argc, argv) != 0) return 1;
    db_init_all(16);
    aof_config_register();
    char err[512];
    if (aof_load_at_startup(err, sizeof err) || aof_open_at_startup(err, sizeof err)) { printf("%s\n", err); return 1; }
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    /* The writer drains what is pending (everysec does not wait for it). */
    strbuf b = {0};
    for (int tries = 0; tries < 100; tries++) {
        b.len = 0;
        aof_info_tail(&b);
        if (strstr(b.p, "aof_buffer_length:0\r\n")) break;
        usleep(50000);
    }
    printf("%s", b.p);
    aof_stop();
    return 0;
}
