/* t_string.c -- placeholder until the family lands. */
#include "cmd/families.h"

const cmd_handler string_handlers[] = {{NULL, NULL, 0}};
