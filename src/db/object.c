/* object.c -- type dispatch for values. Each data type registers its ops at
 * start-up; strings are built in (strval.c). */
#include "object.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/config.h"
#include "util/rand.h"
#include "strval.h"

static const obj_type_ops *type_ops[OBJ_NTYPES];

void obj_register_type(int type, const obj_type_ops *ops) {
    assert(type >= 0 && type < OBJ_NTYPES);
    type_ops[type] = ops;
}

void obj_free(gobj *o) {
    if (o->type == OBJ_STRING) {
        strval_free(o);
    } else if (o->type < OBJ_NTYPES && type_ops[o->type]) {
        type_ops[o->type]->free(o);
    }
    o->type = OBJ_NONE;
}

int obj_dup(gobj *dst, const gobj *src) {
    if (src->type == OBJ_STRING) return strval_dup(dst, src);
    assert(src->type < OBJ_NTYPES && type_ops[src->type]);
    return type_ops[src->type]->dup(dst, src);
}

size_t obj_mem_usage(const gobj *o) {
    if (o->type == OBJ_STRING) return strval_mem_usage(o);
    if (o->type < OBJ_NTYPES && type_ops[o->type] && type_ops[o->type]->mem_usage) return type_ops[o->type]->mem_usage(o);
    return sizeof(gobj);
}

size_t obj_len(const gobj *o) {
    if (o->type != OBJ_STRING && o->type < 5 && type_ops[o->type] && type_ops[o->type]->len)
        return type_ops[o->type]->len(o);
    return 1;
}

int obj_rehash_step(gobj *o, size_t groups) {
    const obj_type_ops *t = o->type < OBJ_NTYPES ? type_ops[o->type] : NULL;
    return t && t->rehash_step ? t->rehash_step(o, groups) : 0;
}

const char *obj_type_name(int type) {
    switch (type) {
    case OBJ_STRING: return "string";
    case OBJ_LIST: return "list";
    case OBJ_SET: return "set";
    case OBJ_ZSET: return "zset";
    case OBJ_HASH: return "hash";
    case OBJ_STREAM: return "stream";
    default: return "none";
    }
}

const char *obj_encoding_name(const gobj *o) {
    switch (o->enc) {
    case ENC_INT: return "int";
    case ENC_EMBSTR: return "embstr";
    case ENC_RAW: return "raw";
    case ENC_LISTPACK: return "listpack";
    case ENC_HASHTABLE: return "hashtable";
    case ENC_INTSET: return "intset";
    case ENC_SKIPLIST: return "skiplist";
    case ENC_QUICKLIST: return "quicklist";
    case ENC_STREAM: return "stream";
    default: return "unknown";
    }
}

static int lfu_mode;
#define LFU_INIT_VAL 5
static int lfu_log_factor = 10; /* lfu-log-factor */
static int lfu_decay_time = 1;  /* lfu-decay-time, minutes */

void obj_config_register(void) {
    if (config_bind_int("lfu-log-factor", &lfu_log_factor) || config_bind_int("lfu-decay-time", &lfu_decay_time))
        abort();
}

void obj_set_lfu_mode(int on) {
    if (__atomic_load_n(&lfu_mode, __ATOMIC_RELAXED) != on) __atomic_store_n(&lfu_mode, on, __ATOMIC_RELAXED);
}
int obj_lfu_mode(void) { return __atomic_load_n(&lfu_mode, __ATOMIC_RELAXED); }

static uint32_t lfu_minutes(void) { return (obj_clock() / 60) & 65535; }

unsigned obj_lfu_freq(const gobj *o) {
    uint32_t ldt = (o->lru >> 8) & 65535, now = lfu_minutes();
    uint32_t elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;
    unsigned counter = o->lru & 255;
    int decay = __atomic_load_n(&lfu_decay_time, __ATOMIC_RELAXED);
    uint32_t periods = decay ? elapsed / (uint32_t)decay : 0;
    return periods > counter ? 0 : counter - periods;
}

void obj_init_access(gobj *o) {
    o->lru = obj_lfu_mode() ? (lfu_minutes() << 8) | LFU_INIT_VAL : obj_clock();
}

void obj_set_access(gobj *o, long long idle_s, int freq) {
    if (obj_lfu_mode()) {
        if (freq >= 0) o->lru = (lfu_minutes() << 8) | (unsigned)(freq & 255);
    } else if (idle_s >= 0) {
        uint32_t now = obj_clock();
        o->lru = (unsigned long long)idle_s >= now ? 0 : now - (uint32_t)idle_s;
    }
}

static int touch_holds;

void obj_touch_hold(int delta) {
    int n = __atomic_add_fetch(&touch_holds, delta, __ATOMIC_RELAXED);
    assert(n >= 0);
    (void)n;
}

void obj_touch(gobj *o) {
    if (__atomic_load_n(&touch_holds, __ATOMIC_RELAXED)) return;
    if (!obj_lfu_mode()) {
        o->lru = obj_clock();
        return;
    }
    unsigned counter = obj_lfu_freq(o);
    if (counter < 255) {
        double base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
        double p = 1.0 / (base * __atomic_load_n(&lfu_log_factor, __ATOMIC_RELAXED) + 1);
        if (rand_double() < p) counter++;
    }
    o->lru = (lfu_minutes() << 8) | counter;
}

uint32_t obj_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint32_t)ts.tv_sec;
}
