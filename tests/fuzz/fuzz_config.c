/* fuzz_config.c -- libFuzzer target for the configuration file parser
 * (redis.conf syntax: quoting, escapes, sizes, enums, multi-argument
 * directives, "user" lines, client-output-buffer-limit).
 *
 * The input is written to a file and loaded with config_load(), as the
 * server does with its first argument. Inputs that name "include" are
 * skipped (they would read arbitrary files); "dir" may change the working
 * directory, which is restored after each run. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "cmd/server/pubsub.h"

static char path[64], home[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(path, sizeof(path), "/tmp/goblin-fuzz-config-%d.conf", (int)getpid());
    if (!getcwd(home, sizeof(home))) abort();
    /* notify-keyspace-events is checked by its owner, as in the server. */
    pubsub_config_register();
    return 0;
}

static int mentions_include(const uint8_t *d, size_t n) {
    static const char word[] = "include";
    for (size_t i = 0; i + 7 <= n; i++) {
        size_t k = 0;
        while (k < 7 && tolower(d[i + k]) == word[k]) k++;
        if (k == 7) return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (mentions_include(data, size)) return 0;
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    char *argv[] = {"goblin-core", path, NULL};
    config_load(2, argv);
    for (int i = 0; i < cfg.nacl_users; i++) {
        for (int j = 0; j < cfg.acl_users[i].argc; j++) free(cfg.acl_users[i].argv[j]);
        free(cfg.acl_users[i].argv);
    }
    free(cfg.acl_users);
    cfg.acl_users = NULL;
    cfg.nacl_users = 0;
    if (chdir(home) != 0) abort();
    unlink(path);
    return 0;
}
