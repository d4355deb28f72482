/* STUB — replaced by the sema work. */
#include "sema.h"
int sema_build(blkc_ctx *c, const char *kernel) { (void)kernel; diag_error(&c->diag, LOC_NONE, "sema not implemented"); return 1; }
