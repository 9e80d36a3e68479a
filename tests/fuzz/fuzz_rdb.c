/* fuzz_rdb.c -- libFuzzer target for the RDB reader.
 *
 * The input is written to a memfd and loaded with rdb_load_file() into a
 * detached dataset, exactly as LOAD does, then discarded. Any input must
 * either load or be refused with an error message: never crash, leak or
 * read out of bounds (ASan/UBSan). The value types register their ops once,
 * as at server start-up. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_server.h"
#include "persist/rdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_server_setup();
    int fd = memfd_create("rdb", 0);
    if (fd < 0) return 0;
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) break;
        off += (size_t)n;
    }
    char path[64], err[1400];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    rdb_loaded ld;
    rdb_load_opts opt;
    memset(&opt, 0, sizeof(opt));
    int rc = rdb_load_file(path, &opt, &ld, err, sizeof(err));
    (void)rc;
    rdb_load_discard(&ld);
    close(fd);
    return 0;
}
