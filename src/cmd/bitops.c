/* bitops.c -- placeholder until the family lands. */
#include "cmd/families.h"

const cmd_handler bitops_handlers[] = {{NULL, NULL, 0}};
