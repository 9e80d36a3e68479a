/* info.c -- placeholder until the family lands. */
#include "cmd/families.h"

const cmd_handler info_handlers[] = {{NULL, NULL, 0}};
