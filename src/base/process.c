/* process.c -- the one process-wide state record (see process.h). */
#include "base/process.h"

server_state srv;
