/* SPDX-License-Identifier: MIT */
/* The acquire's one list of members (protocol/acquire_fields.h) held to
 * both encoders: libberth's direct line (request_line_fast) and the codec's
 * (proto_encode_request). Every check walks the list itself, so a member
 * added there is checked here with no edit, and an encoder that leaves one
 * out, or writes it under another name, fails. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "acquire_fields.h"
#include "codec.h"
#include "libberth_private.h"
#include "request_fast.h"
#include "testutil.h"

/* ---- a value for each kind: given, in bounds, distinct per member ------- */

/* i is the member's index in the list: a member written under another's
 * name, or from another's field, then reads back wrong. */
static void fill_COUNT (int *v, const int *dflt, const char *name, int i,
                        long long min, long long max)
{
    (void) dflt, (void) name;
    long long x = i + 2;        /* 2 up: not 0 (priority's default) or 1 */
    *v = (int) (x < min ? min : x > max ? max : x);
}

#define fill_INT fill_COUNT

static void fill_MB (int64_t *v, const int64_t *dflt, const char *name, int i,
                     long long min, long long max)
{
    (void) dflt, (void) name, (void) min;
    *v = max - i;               /* large: past 32 bits */
}

static void fill_BOOL (bool *v, const bool *dflt, const char *name, int i,
                       long long min, long long max)
{
    (void) name, (void) i, (void) min, (void) max;
    *v = !*dflt;
}

/* false: given, and not the same as unset */
static void fill_TRISTATE (int *v, const int *dflt, const char *name, int i,
                           long long min, long long max)
{
    (void) dflt, (void) name, (void) i, (void) min, (void) max;
    *v = 0;
}

static void fill_NAME (char **v, char *const *dflt, const char *name, int i,
                       long long min, long long max)
{
    (void) dflt, (void) i, (void) min, (void) max;
    *v = strdup (name);
}

static void fill_SECONDS (double *v, const double *dflt, const char *name, int i,
                          long long min, long long max)
{
    (void) dflt, (void) name, (void) min, (void) max;
    *v = i + 0.25;
}

static void fill_ARGV (char ***v, char **const *dflt, const char *name, int i,
                       long long min, long long max)
{
    (void) dflt, (void) i, (void) min, (void) max;
    *v = calloc (3, sizeof (**v));
    ck_assert_ptr_nonnull (*v);
    (*v)[0] = strdup ("prog");
    (*v)[1] = strdup (name);
}

/* ---- the same value, kind by kind --------------------------------------- */

static bool same_COUNT (const int *a, const int *b)
{
    return *a == *b;
}

#define same_INT same_COUNT
#define same_TRISTATE same_COUNT

static bool same_MB (const int64_t *a, const int64_t *b)
{
    return *a == *b;
}

static bool same_BOOL (const bool *a, const bool *b)
{
    return *a == *b;
}

static bool same_NAME (char *const *a, char *const *b)
{
    return *a == *b || (*a && *b && !strcmp (*a, *b));
}

static bool same_SECONDS (const double *a, const double *b)
{
    return !memcmp (a, b, sizeof (*a));
}

static bool same_ARGV (char **const *a, char **const *b)
{
    if (!*a || !*b)
        return *a == *b;
    size_t i = 0;
    for (; (*a)[i] && (*b)[i]; i++)
        if (strcmp ((*a)[i], (*b)[i]))
            return false;
    return !(*a)[i] && !(*b)[i];
}

/* ---- helpers ------------------------------------------------------------ */

static const char *const names[PROTO_ACQ_NFIELDS] = {
#define NAME(name, kind, holder, min, max, fast) #name,
    PROTO_ACQUIRE_FIELDS (NAME)
#undef NAME
};

/* An acquire with the members whose bit is in mask given (the rest left at
 * their defaults). */
static void fill (struct proto_request *req, unsigned long long mask)
{
    struct proto_request fresh;
    proto_request_init (req, PROTO_ACQUIRE);
    proto_request_init (&fresh, PROTO_ACQUIRE);
    struct proto_acquire *acq = &req->acquire, *dflt_acq = &fresh.acquire;
    struct step_request *step = &acq->step, *dflt_step = &dflt_acq->step;
#define FILL(name, kind, holder, min, max, fast)                             \
    if (mask >> PROTO_ACQ_##name & 1)                                        \
        fill_##kind (&holder->name, &dflt_##holder->name, #name,             \
                     PROTO_ACQ_##name, min, max);
    PROTO_ACQUIRE_FIELDS (FILL)
#undef FILL
}

/* The first member of the list in which a and b differ, or NULL. */
static const char *differs (const struct proto_request *a, const struct proto_request *b)
{
    const struct proto_acquire *x = &a->acquire, *y = &b->acquire;
    const struct step_request *xs = &x->step, *ys = &y->step;
    (void) xs, (void) ys;
#define HOLDER_x_step xs
#define HOLDER_x_acq x
#define HOLDER_y_step ys
#define HOLDER_y_acq y
#define SAME(name, kind, holder, min, max, fast)                             \
    if (!same_##kind (&HOLDER_x_##holder->name, &HOLDER_y_##holder->name))  \
        return #name;
    PROTO_ACQUIRE_FIELDS (SAME)
#undef SAME
    return a->op != b->op ? "op" : NULL;
}

/* The codec's line for req under id. */
static char *codec_line (struct proto_request *req, long long id)
{
    req->id = json_integer (id);
    json_t *o = proto_encode_request (req);
    ck_assert_ptr_nonnull (o);
    char *line = proto_line (o);
    json_decref (o);
    json_decref (req->id);
    req->id = NULL;
    ck_assert_ptr_nonnull (line);
    return line;
}

/* Both encoders' lines for req, which must be the same bytes; returned
 * once (the caller frees it). */
static char *both_lines (struct proto_request *req, long long id)
{
    char *fast = request_line_fast (req, id), *slow = codec_line (req, id);
    ck_assert_msg (fast != NULL, "libberth did not write it directly: %s", slow);
    ck_assert_str_eq (fast, slow);
    free (slow);
    return fast;
}

/* line decoded by the strict decoder, with every member as in want. */
static void assert_decodes_to (const char *line, const struct proto_request *want)
{
    struct proto_request got;
    berth_error_t err = { 0 };
    int rc = proto_decode_request_jansson (line, strlen (line) - 1, &got, &err);
    ck_assert_msg (rc == 0, "%s refused: %s", line, err.text);
    const char *d = differs (&got, want);
    ck_assert_msg (d == NULL, "member %s does not read back from %s", d ? d : "", line);
    proto_request_free (&got);
}

/* The members of line's object other than op and id, in order, checked
 * against the list's members whose bit is in mask. */
static void assert_members (const char *line, unsigned long long mask)
{
    json_error_t je;
    json_t *o = json_loads (line, 0, &je);
    ck_assert_msg (o != NULL, "%s: %s", line, je.text);
    size_t want = 2;
    for (int k = 0; k < PROTO_ACQ_NFIELDS; k++) {
        bool in = mask >> k & 1;
        want += in;
        ck_assert_msg ((json_object_get (o, names[k]) != NULL) == in,
                       "member %s %s: %s", names[k], in ? "not written" : "written",
                       line);
    }
    ck_assert_msg (json_object_size (o) == want, "%zu members, not %zu: %s",
                   json_object_size (o), want, line);
    json_decref (o);
}

#define ALL ((1ULL << PROTO_ACQ_NFIELDS) - 1)
_Static_assert (PROTO_ACQ_NFIELDS < 64, "a member's bit fits the mask");

/* ---- the tests ---------------------------------------------------------- */

/* Every member given: both lines are the same bytes, name every member of
 * the list and nothing else, and each decodes strictly to the request. */
START_TEST (every_member)
{
    struct proto_request req;
    fill (&req, ALL);
    char *line = both_lines (&req, 42);
    assert_members (line, ALL);
    assert_decodes_to (line, &req);
    free (line);
    proto_request_free (&req);
}
END_TEST

/* Each member alone: written by both, under its own name, and by itself. */
START_TEST (each_member_alone)
{
    for (int k = 0; k < PROTO_ACQ_NFIELDS; k++) {
        struct proto_request req;
        fill (&req, 1ULL << k);
        char *line = both_lines (&req, k);
        assert_members (line, 1ULL << k);
        free (line);
        proto_request_free (&req);
    }
}
END_TEST

/* Nothing given: no member written; the line reads back as the defaults. */
START_TEST (nothing_given)
{
    struct proto_request req;
    fill (&req, 0);
    char *line = both_lines (&req, 5);
    ck_assert_str_eq (line, "{\"op\":\"acquire\",\"id\":5}\n");
    assert_decodes_to (line, &req);
    free (line);
    proto_request_free (&req);
}
END_TEST

/* The fast lane reads what the encoders write as the strict decoder does,
 * for every member it takes (the list's fast flag). */
START_TEST (fast_lane_reads_it)
{
    unsigned long long fast_mask = 0;
#define FAST(name, kind, holder, min, max, fast)                             \
    fast_mask |= (fast ? 1ULL : 0ULL) << PROTO_ACQ_##name;
    PROTO_ACQUIRE_FIELDS (FAST)
#undef FAST
    struct proto_request req, got;
    fill (&req, fast_mask);
    char *line = both_lines (&req, 9);
    ck_assert_int_eq (proto_decode_request_fast (line, strlen (line) - 1, &got), 0);
    const char *d = differs (&got, &req);
    ck_assert_msg (d == NULL, "the fast lane reads %s otherwise: %s", d ? d : "", line);
    proto_request_free (&got);
    free (line);
    proto_request_free (&req);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("acquire_encode");
    TCase *tc = tcase_create ("encoders");
    tcase_add_test (tc, every_member);
    tcase_add_test (tc, each_member_alone);
    tcase_add_test (tc, nothing_given);
    tcase_add_test (tc, fast_lane_reads_it);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
