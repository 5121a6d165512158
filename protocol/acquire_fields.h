/* SPDX-License-Identifier: MIT */
/* The members of an acquire request, described once for the strict decoder
 * (codec_request.c), the fast lane (request_fast.c) and both encoders (the
 * codec's, codec_request_encode.c, and libberth's direct line,
 * libberth_request.c): the decoders check them in this order, with these
 * kinds and bounds, and the encoders write them in this order, under these
 * names, when proto_acq_given_<kind> holds (below).
 *
 * X (name, kind, holder, min, max, fast): name is the member on the wire
 * and the field of holder that takes it (step: struct step_request, acq:
 * struct proto_acquire); kind is COUNT (int), MB (int64_t), INT (int), BOOL,
 * TRISTATE (an int left STEP_UNSET when absent), NAME (a label: a short
 * printable string), SECONDS (a double from 0 to max) or ARGV (a non-empty
 * array of strings, the first non-empty); min and max bound COUNT, MB and
 * INT; fast is 0 for a member the fast lane declines (left to the strict
 * decoder). */
#ifndef BERTH_PROTO_ACQUIRE_FIELDS_H
#define BERTH_PROTO_ACQUIRE_FIELDS_H

#include "codec.h"

#define PROTO_ACQUIRE_FIELDS(X)                                              \
    X (ntasks, COUNT, step, 1, PROTO_MAX_COUNT, 1)                           \
    X (min_tasks, COUNT, step, 1, PROTO_MAX_COUNT, 1)                        \
    X (cpus_per_task, COUNT, step, 1, PROTO_MAX_COUNT, 1)                    \
    X (min_cpus_per_task, COUNT, step, 1, PROTO_MAX_COUNT, 1)                \
    X (cores, COUNT, step, 1, PROTO_MAX_COUNT, 1)                            \
    X (min_cores, COUNT, step, 1, PROTO_MAX_COUNT, 1)                        \
    X (gpus, COUNT, step, 0, PROTO_MAX_COUNT, 1)                             \
    X (min_gpus, COUNT, step, 0, PROTO_MAX_COUNT, 1)                         \
    X (gpus_per_task, COUNT, step, 0, PROTO_MAX_COUNT, 1)                    \
    X (min_gpus_per_task, COUNT, step, 0, PROTO_MAX_COUNT, 1)                \
    X (memory, MB, step, 1, PROTO_MAX_MEMORY_MB, 1)                          \
    X (min_memory, MB, step, 1, PROTO_MAX_MEMORY_MB, 1)                      \
    X (may_span_nodes, TRISTATE, step, 0, 1, 1)                              \
    X (local, BOOL, step, 0, 1, 1)                                           \
    X (label, NAME, step, 1, PROTO_MAX_NAME, 1)                              \
    X (priority, INT, step, -PROTO_MAX_PRIORITY, PROTO_MAX_PRIORITY, 1)      \
    X (timeout, SECONDS, step, 0, PROTO_MAX_SECONDS, 1)                      \
    X (wait, BOOL, acq, 0, 1, 1)                                             \
    X (argv, ARGV, step, 1, PROTO_MAX_ARGS, 1)                               \
    X (detach, BOOL, acq, 0, 1, 1)                                           \
    X (ttl, SECONDS, acq, 0, PROTO_MAX_SECONDS, 1)                           \
    X (owner_pid, INT, acq, 1, PROTO_MAX_PID, 1)                             \
    X (env, BOOL, acq, 0, 1, 1)                                              \
    X (duration, SECONDS, acq, 0, PROTO_MAX_SECONDS, 1)                      \
    X (resume, BOOL, acq, 0, 1, 0)

/* The members most acquires give, which the strict decoder tries first with
 * a short format (jansson's unpack costs per member the format names). */
#define PROTO_ACQUIRE_COMMON(X)                                              \
    X (ntasks) X (cpus_per_task) X (cores) X (gpus) X (memory) X (label)     \
    X (argv) X (local) X (env)

/* Each member's index: PROTO_ACQ_##name. */
enum {
#define PROTO_ACQ_INDEX(name, kind, holder, min, max, fast) PROTO_ACQ_##name,
    PROTO_ACQUIRE_FIELDS (PROTO_ACQ_INDEX)
#undef PROTO_ACQ_INDEX
    PROTO_ACQ_NFIELDS
};

/* Whether an encoder writes a member: when it holds other than "not
 * given". v is the member, dflt the same member of a request fresh from
 * proto_request_init, min the list's. Both encoders ask this, so their
 * lines have the same members, and a member left out reads back as the
 * default it had. */
static inline bool proto_acq_given_COUNT (const int *v, const int *dflt, long long min)
{
    (void) dflt, (void) min;
    return *v != STEP_UNSET;
}

static inline bool proto_acq_given_MB (const int64_t *v, const int64_t *dflt,
                                       long long min)
{
    (void) dflt, (void) min;
    return *v != STEP_UNSET;
}

#define proto_acq_given_TRISTATE proto_acq_given_COUNT

/* Other than its default (priority's 0); a member taking only positive
 * values (owner_pid) is not given at 0 or below either. */
static inline bool proto_acq_given_INT (const int *v, const int *dflt, long long min)
{
    return min > 0 ? *v > 0 : *v != *dflt;
}

/* Other than its default: "local": true, but "wait": false. */
static inline bool proto_acq_given_BOOL (const bool *v, const bool *dflt, long long min)
{
    (void) min;
    return *v != *dflt;
}

static inline bool proto_acq_given_NAME (char *const *v, char *const *dflt, long long min)
{
    (void) dflt, (void) min;
    return *v != NULL;
}

static inline bool proto_acq_given_ARGV (char **const *v, char **const *dflt, long long min)
{
    (void) dflt, (void) min;
    return *v != NULL;
}

/* Not negative: -1 is "none" (no timeout, ttl or stated duration). */
static inline bool proto_acq_given_SECONDS (const double *v, const double *dflt,
                                            long long min)
{
    (void) dflt, (void) min;
    return *v >= 0;
}

#endif
