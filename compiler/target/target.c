/* target.c — the table of known targets (the only place that lists them). */
#include "target.h"

#include <string.h>

static const tgt_target *const targets[] = {&tgt_sm90a, &tgt_sm90, &tgt_sm80};

const tgt_target *tgt_lookup(const char *arch) {
    if (!arch) return NULL;
    for (unsigned i = 0; i < sizeof targets / sizeof targets[0]; i++)
        if (strcmp(targets[i]->arch, arch) == 0) return targets[i];
    return NULL;
}

const char *tgt_known_list(void) { return "sm_90a, sm_90, sm_80"; }

const tgt_target *tgt_default(void) { return &tgt_sm90a; }
