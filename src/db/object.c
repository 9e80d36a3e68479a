/* object.c -- type dispatch for values. Each data type registers its ops at
 * start-up; strings are built in (strval.c). */
#include "object.h"

#include <assert.h>
#include <string.h>
#include <time.h>

#include "strval.h"

static const obj_type_ops *type_ops[5];

void obj_register_type(int type, const obj_type_ops *ops) {
    assert(type >= 0 && type < 5);
    type_ops[type] = ops;
}

void obj_free(gobj *o) {
    if (o->type == OBJ_STRING) {
        strval_free(o);
    } else if (o->type < 5 && type_ops[o->type]) {
        type_ops[o->type]->free(o);
    }
    o->type = OBJ_NONE;
}

int obj_dup(gobj *dst, const gobj *src) {
    if (src->type == OBJ_STRING) return strval_dup(dst, src);
    assert(src->type < 5 && type_ops[src->type]);
    return type_ops[src->type]->dup(dst, src);
}

size_t obj_mem_usage(const gobj *o) {
    if (o->type == OBJ_STRING) return strval_mem_usage(o);
    if (o->type < 5 && type_ops[o->type] && type_ops[o->type]->mem_usage) return type_ops[o->type]->mem_usage(o);
    return sizeof(gobj);
}

const char *obj_type_name(int type) {
    switch (type) {
    case OBJ_STRING: return "string";
    case OBJ_LIST: return "list";
    case OBJ_SET: return "set";
    case OBJ_ZSET: return "zset";
    case OBJ_HASH: return "hash";
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
    default: return "unknown";
    }
}

uint32_t obj_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return (uint32_t)ts.tv_sec;
}
