/* test_crc16.c -- util/crc16: the check value and key slots as
 * redis-server 7.0.15 CLUSTER KEYSLOT gives them (hash-tag edge cases). */
#include <string.h>

#include "util/crc16.h"
#include "unit.h"

TEST(crc16, check_value) {
    CHECK_EQ(crc16_update(0, "123456789", 9), 0x31c3);
    CHECK_EQ(crc16_update(crc16_update(0, "1234", 4), "56789", 5), 0x31c3);
    CHECK_EQ(crc16_update(0, "", 0), 0);
}

TEST(crc16, key_slots_as_redis) {
    static const struct {
        const char *k;
        unsigned slot;
    } cases[] = {
        {"foo", 12182},         {"bar", 5061},           {"{user1000}.following", 3443},
        {"{user1000}.followers", 3443}, {"foo{}{bar}", 8363}, {"foo{{bar}}zap", 4015},
        {"foo{bar}{zap}", 5061}, {"{}", 15257},           {"", 0},
        {"a{b", 13340},          {"}{x}", 16287},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK_EQ(crc16_key_slot(cases[i].k, strlen(cases[i].k)), cases[i].slot);
}
