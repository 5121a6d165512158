/* SPDX-License-Identifier: MIT */
/* The fast lane of the hot replies (reply_fast.h) reads exactly what the
 * jansson path reads, or declines; and libberth's lease and request line
 * built on it are the same as before. */
#include <jansson.h>
#include <limits.h>
#include <string.h>

#include "../fuzz/reply_fast_agree.h"
#include "libberth_private.h"
#include "mutate.h"
#include "reply_fast.h"
#include "testutil.h"

/* Grant replies the fast lane decodes. */
static const char *const leases[] = {
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"label\":null,\"placement\":{\"nodes\":[\"vm\"],"
    "\"cores\":[[0]],\"gpus\":0,\"gpu_ids\":[]},\"memory_cap\":null,\"budget_mb\":185,"
    "\"env_delta\":{\"unset\":[],\"set\":{}},\"owner_pid\":12723,\"granted\":1796024247.2969308}\n",
    "{\"id\":77,\"ok\":true,\"lease\":\"L17\",\"label\":\"ocean\",\"placement\":{\"nodes\":"
    "[\"a\",\"b\"],\"cores\":[[8,0,1,2,3],[8,0,1,2,3]],\"gpus\":2,\"gpu_ids\":[0,1]},"
    "\"memory_cap\":6000,\"budget_mb\":6000,\"argv\":[\"srun\",\"-n\",\"2\",\"./m\"],"
    "\"env_delta\":{\"unset\":[\"SLURM_CPU_BIND\",\"X\"],\"set\":{\"OMP_NUM_THREADS\":\"5\","
    "\"B\":\"\",\"A\":\"x y\"}},\"granted\":1754300000,\"owner_pid\":77}",
    /* members in another order, spaces, an env from berthd */
    " { \"placement\" : { \"gpu_ids\" : null , \"gpus\" : 2 , \"cores\" : [ [ 4 , 5 ] ] ,"
    " \"nodes\" : [ \"n-1\" ] } , \"ok\" : true , \"lease\" : \"L2\" , \"id\" : -0 ,"
    " \"env\" : { \"BERTH_LEASE\" : \"L2\" , \"X\" : \"y\" } }\r\n",
    /* the least a grant can be */
    "{\"id\":9,\"ok\":true,\"lease\":\"L3\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[]]}}",
    /* nulls for everything that may be left out */
    "{\"id\":2,\"ok\":true,\"lease\":\"L4\",\"label\":null,\"placement\":{\"nodes\":[\"a\"],"
    "\"cores\":[[1]],\"gpus\":null,\"gpu_ids\":null},\"memory_cap\":null,\"budget_mb\":null,"
    "\"argv\":null,\"env_delta\":null,\"env\":null,\"owner_pid\":null,\"granted\":null}",
    /* empty ones that are still stated: env {} (so none derived), set {} */
    "{\"id\":3,\"ok\":true,\"lease\":\"L5\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},"
    "\"env\":{},\"env_delta\":{\"set\":{}},\"granted\":0,\"memory_cap\":0,\"budget_mb\":0}",
    "{\"id\":4,\"ok\":true,\"lease\":\"L6\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},"
    "\"env_delta\":{\"unset\":null,\"set\":null},\"granted\":0.5,\"owner_pid\":2147483647,"
    "\"memory_cap\":1099511627776,\"argv\":[\"x\",\"\"]}",
    /* GPUs counted from their ids */
    "{\"id\":10,\"ok\":true,\"lease\":\"L9\",\"placement\":{\"nodes\":[\"a\"],"
    "\"cores\":[[0]],\"gpu_ids\":[3,4]}}",
    /* the limits of ids and counts */
    "{\"id\":999999999999999999,\"ok\":true,\"lease\":\"L7\",\"placement\":{\"nodes\":"
    "[\"a\"],\"cores\":[[1048576,0]],\"gpus\":1048576,\"gpu_ids\":[1048576]},"
    "\"granted\":1000000000000}",
    /* a reclaim answers the same way */
    "{\"ok\":true,\"id\":5,\"lease\":\"L8\",\"label\":\"~!@#$%^&*()_+{}[]:;'<>,.?/|`\","
    "\"placement\":{\"nodes\":[\"a\",\"b\",\"c\"],\"cores\":[[0],[1],[2,3]]}}",
};

static const char *const releases[] = {
    "{\"id\":2,\"ok\":true,\"lease\":\"L1\"}\n",
    " {\"lease\" : \"L1\", \"ok\": true, \"id\": 12345} ",
    "{\"id\":-7,\"ok\":true,\"lease\":\"\"}",
};

#define GRANT(extra) "{\"id\":1,\"ok\":true" extra "}"
#define PLACED(p) GRANT (",\"lease\":\"L1\",\"placement\":" p)
#define MEMBER(m) PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0]]}," m)

/* Declined although jansson reads them: the jansson path takes these. */
static const char *const fallbacks[] = {
    /* an escape, a byte outside ASCII, an exponent */
    "{\"id\":1,\"ok\":true,\"lease\":\"L\\u0031\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}}",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"label\":\"\xc3\xa9t\xc3\xa9\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}}",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"granted\":1.7e9}",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"granted\":17E8}",
    /* members this lane does not know */
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"warning\":\"w\"}",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"later\":[1]}",
    MEMBER ("\"env_delta\":{\"unset\":[],\"set\":{},\"more\":1}"),
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"extra\":null}",
    /* a null id: the jansson path takes it as the reply */
    "{\"id\":null,\"ok\":true,\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}}",
    "{\"id\":null,\"ok\":true,\"lease\":\"L1\"}",
    /* too long a number for the scanner */
    "{\"id\":1234567890123456789,\"ok\":true,\"lease\":\"L1\"}",
    /* a release reply without the lease, or with another type */
    "{\"id\":1,\"ok\":true}",
    "{\"id\":1,\"ok\":true,\"lease\":5}",
};

/* Declined, and refused by the jansson path too (as an error, an event or a
 * malformed reply). */
static const char *const refused[] = {
    "",
    "{}",
    "[1]",
    "{\"id\":1 \"ok\":true,\"lease\":\"L1\"}",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\"}x",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\"}{}",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",}",
    "{\"id\":1,\"ok\":true,\"lease\":\"L1\",\"lease\":\"L2\"}",
    "{\"id\":1,\"ok\":false,\"error\":{\"code\":\"busy\",\"message\":\"no\"}}",
    "{\"id\":1,\"ok\":false,\"lease\":\"L1\"}",
    "{\"id\":1,\"ok\":1,\"lease\":\"L1\"}",
    "{\"id\":1,\"lease\":\"L1\"}",
    "{\"ok\":true,\"lease\":\"L1\"}",
    "{\"id\":\"1\",\"ok\":true,\"lease\":\"L1\"}",
    "{\"id\":1.0,\"ok\":true,\"lease\":\"L1\"}",
    "{\"event\":\"granted\",\"time\":1,\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}}",
};

/* Grants the codec refuses, each for one member (so declined here). */
static const char *const bad_grants[] = {
    GRANT (",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}"),
    GRANT (",\"lease\":null,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}"),
    GRANT (",\"lease\":1,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}"),
    GRANT (",\"lease\":\"\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}"),
    GRANT (",\"lease\":\"L1\",\"label\":\"x\""),
    PLACED ("null"),
    PLACED ("[]"),
    PLACED ("{\"nodes\":[\"a\"]}"),
    PLACED ("{\"cores\":[[0]]}"),
    PLACED ("{\"nodes\":[],\"cores\":[]}"),
    PLACED ("{\"nodes\":\"a\",\"cores\":[[0]]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0],[1]]}"),
    PLACED ("{\"nodes\":[\"a\",\"b\"],\"cores\":[[0]]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[0]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[-1]]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[1048577]]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0.5]]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[null]]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[[0]]]}"),
    PLACED ("{\"nodes\":[null],\"cores\":[[0]]}"),
    PLACED ("{\"nodes\":[\"\"],\"cores\":[[0]]}"),
    PLACED ("{\"nodes\":[[\"a\"]],\"cores\":[[0]]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":-1}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":1048577}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":true}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpu_ids\":{}}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpu_ids\":[\"0\"]}"),
    PLACED ("{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpu\":1}"),
    MEMBER ("\"label\":\"\""),
    MEMBER ("\"label\":7"),
    MEMBER ("\"memory_cap\":-1"),
    MEMBER ("\"memory_cap\":1099511627777"),
    MEMBER ("\"budget_mb\":\"5\""),
    MEMBER ("\"budget_mb\":5.0"),
    MEMBER ("\"owner_pid\":0"),
    MEMBER ("\"owner_pid\":2147483648"),
    MEMBER ("\"granted\":-1"),
    MEMBER ("\"granted\":-0.5"),
    MEMBER ("\"granted\":1000000000000.5"),
    MEMBER ("\"granted\":\"now\""),
    MEMBER ("\"argv\":[]"),
    MEMBER ("\"argv\":[\"\"]"),
    MEMBER ("\"argv\":[\"a\",1]"),
    MEMBER ("\"argv\":[\"a\",null]"),
    MEMBER ("\"argv\":\"a\""),
    MEMBER ("\"env_delta\":[]"),
    MEMBER ("\"env_delta\":{\"unset\":{}}"),
    MEMBER ("\"env_delta\":{\"unset\":[\"\"]}"),
    MEMBER ("\"env_delta\":{\"unset\":[null]}"),
    MEMBER ("\"env_delta\":{\"unset\":[\"A\",2]}"),
    MEMBER ("\"env_delta\":{\"set\":{\"A\":1}}"),
    MEMBER ("\"env_delta\":{\"set\":{\"A\":\"1\",\"B\":null}}"),
    MEMBER ("\"env_delta\":{\"set\":[]}"),
    MEMBER ("\"env\":[]"),
    MEMBER ("\"env\":{\"A\":{}}"),
    MEMBER ("\"env\":{\"A\":\"x\",\"B\":true}"),
};

/* Fast declines line, leaving the lease as it was; the jansson path reads
 * it or not as expected (want_read). */
static void assert_declined (const char *line, int want_read)
{
    size_t len = strlen (line);
    struct proto_fast_reply r = { .id = 42 };
    struct proto_lease l;
    memset (&l, 0x5a, sizeof (l));
    ck_assert_msg (proto_fast_lease_reply (line, len, &r, &l) == 1, "lease accepted: %s", line);
    for (size_t i = 0; i < sizeof (l); i++)
        ck_assert_msg (((unsigned char *) &l)[i] == 0x5a, "lease changed: %s", line);
    ck_assert_msg (proto_fast_release_reply (line, len, &r) == 1, "release accepted: %s", line);
    ck_assert_int_eq (r.id, 42);
    char why[128] = "";
    ck_assert_msg (reply_fast_agrees (line, len, why, sizeof (why)) == 0, "%s: %s", why, line);
    if (want_read >= 0) {
        long long id;
        struct proto_lease slow;
        proto_lease_init (&slow);
        int lease_read = reply_by_jansson (line, len, &id, &slow) == 0;
        int release_read = reply_by_jansson (line, len, &id, NULL) == 0;
        proto_lease_free (&slow);
        ck_assert_msg ((lease_read || release_read) == want_read,
                       "the jansson path %s: %s", want_read ? "refuses" : "reads", line);
    }
}

START_TEST (leases_agree)
{
    for (size_t i = 0; i < sizeof (leases) / sizeof (leases[0]); i++) {
        char why[128] = "";
        ck_assert_msg (reply_fast_agrees (leases[i], strlen (leases[i]), why, sizeof (why)) == 1,
                       "%s: %s", why[0] ? why : "declined", leases[i]);
        struct proto_fast_reply r;
        ck_assert_msg (proto_fast_release_reply (leases[i], strlen (leases[i]), &r) == 1,
                       "a grant is not a release reply: %s", leases[i]);
    }
}
END_TEST

START_TEST (releases_agree)
{
    for (size_t i = 0; i < sizeof (releases) / sizeof (releases[0]); i++) {
        char why[128] = "";
        struct proto_fast_reply r = { 0 };
        struct proto_lease l;
        ck_assert_msg (reply_fast_agrees (releases[i], strlen (releases[i]), why, sizeof (why)) == 1,
                       "%s: %s", why[0] ? why : "declined", releases[i]);
        ck_assert_int_eq (proto_fast_release_reply (releases[i], strlen (releases[i]), &r), 0);
        ck_assert (r.ok);
        /* no placement: not a grant */
        ck_assert_int_eq (proto_fast_lease_reply (releases[i], strlen (releases[i]), &r, &l), 1);
    }
    struct proto_fast_reply r = { 0 };
    ck_assert_int_eq (proto_fast_release_reply (releases[1], strlen (releases[1]), &r), 0);
    ck_assert_int_eq (r.id, 12345);
}
END_TEST

/* Values checked as they are, not only as the jansson path reads them. */
START_TEST (values)
{
    struct proto_fast_reply r = { 0 };
    struct proto_lease l;
    ck_assert_int_eq (proto_fast_lease_reply (leases[0], strlen (leases[0]), &r, &l), 0);
    ck_assert_int_eq (r.id, 1);
    ck_assert (r.ok);
    ck_assert_str_eq (l.id, "L1");
    ck_assert_ptr_null (l.label);
    ck_assert_int_eq (l.placement.nnodes, 1);
    ck_assert_str_eq (l.placement.nodes[0].name, "vm");
    ck_assert_int_eq (l.placement.nodes[0].ncores, 1);
    ck_assert_int_eq (l.placement.nodes[0].cores[0], 0);
    ck_assert_int_eq (l.placement.gpus, 0);
    ck_assert_ptr_nonnull (l.placement.gpu_ids);    /* none, and known */
    ck_assert_int_eq (l.placement.ngpu_ids, 0);
    ck_assert_int_eq (l.memory_cap, -1);
    ck_assert_int_eq (l.budget_mb, 185);
    ck_assert_ptr_null (l.launch.argv);
    ck_assert_int_eq (l.launch.n_unset, 0);
    ck_assert_ptr_nonnull (l.launch.env_set);
    ck_assert_int_eq (l.launch.n_set, 0);
    ck_assert_ptr_null (l.env);
    ck_assert_int_eq (l.owner_pid, 12723);
    ck_assert (l.granted == 1796024247.2969308);
    proto_lease_free (&l);

    ck_assert_int_eq (proto_fast_lease_reply (leases[1], strlen (leases[1]), &r, &l), 0);
    ck_assert_int_eq (r.id, 77);
    ck_assert_str_eq (l.label, "ocean");
    ck_assert_int_eq (l.placement.nodes[1].ncores, 5);
    ck_assert_int_eq (l.placement.nodes[1].cores[0], 8);
    ck_assert_int_eq (l.placement.gpu_ids[1], 1);
    ck_assert_int_eq (l.launch.argc, 4);
    ck_assert_str_eq (l.launch.argv[3], "./m");
    ck_assert_ptr_null (l.launch.argv[4]);
    ck_assert_str_eq (l.launch.env_unset[1], "X");
    ck_assert_int_eq (l.launch.n_set, 3);
    ck_assert_str_eq (l.launch.env_set[2].name, "A");
    ck_assert_str_eq (l.launch.env_set[2].value, "x y");
    ck_assert (l.granted == 1754300000.0);
    proto_lease_free (&l);

    ck_assert_int_eq (proto_fast_lease_reply (leases[2], strlen (leases[2]), &r, &l), 0);
    ck_assert_int_eq (r.id, 0);
    ck_assert_int_eq (l.placement.gpus, 2);
    ck_assert_ptr_null (l.placement.gpu_ids);       /* not known */
    ck_assert_int_eq (l.nenv, 2);
    ck_assert_str_eq (l.env[1].value, "y");
    ck_assert (l.granted < 0);
    ck_assert_int_eq (l.owner_pid, 0);
    proto_lease_free (&l);

    ck_assert_int_eq (proto_fast_lease_reply (leases[3], strlen (leases[3]), &r, &l), 0);
    ck_assert_ptr_nonnull (l.placement.nodes[0].cores);   /* empty, as the codec has it */
    ck_assert_int_eq (l.placement.nodes[0].ncores, 0);
    ck_assert_int_eq (l.placement.gpus, 0);
    proto_lease_free (&l);

    ck_assert_int_eq (proto_fast_lease_reply (leases[7], strlen (leases[7]), &r, &l), 0);
    ck_assert_str_eq (l.id, "L9");
    ck_assert_int_eq (l.placement.gpus, 2);
    ck_assert_int_eq (l.placement.gpu_ids[0], 3);
    proto_lease_free (&l);
}
END_TEST

START_TEST (declined)
{
    for (size_t i = 0; i < sizeof (fallbacks) / sizeof (fallbacks[0]); i++) {
        /* a null id is read as the reply by libberth, not by reply_by_jansson */
        bool null_id = strstr (fallbacks[i], "\"id\":null") != NULL;
        assert_declined (fallbacks[i], null_id ? -1 : 1);
        json_t *msg;
        berth_error_t e;
        ck_assert_int_eq (proto_parse_message (fallbacks[i], strlen (fallbacks[i]), &msg, &e), 0);
        ck_assert_int_eq (proto_reply_status (msg, &e), 0);
        json_decref (msg);
    }
    for (size_t i = 0; i < sizeof (refused) / sizeof (refused[0]); i++)
        assert_declined (refused[i], 0);
    for (size_t i = 0; i < sizeof (bad_grants) / sizeof (bad_grants[0]); i++) {
        assert_declined (bad_grants[i], -1);
        /* the codec refuses it as a lease */
        long long id;
        struct proto_lease slow;
        proto_lease_init (&slow);
        ck_assert_msg (reply_by_jansson (bad_grants[i], strlen (bad_grants[i]), &id, &slow) < 0,
                       "the codec reads %s", bad_grants[i]);
    }
    /* a name of 255 bytes is one, 256 are not */
    char line[1024], name[300];
    memset (name, 'n', 256);
    name[256] = '\0';
    snprintf (line, sizeof (line), PLACED ("{\"nodes\":[\"%s\"],\"cores\":[[0]]}"), name);
    assert_declined (line, -1);
    long long id;
    struct proto_lease slow;
    proto_lease_init (&slow);
    ck_assert_int_lt (reply_by_jansson (line, strlen (line), &id, &slow), 0);
    name[255] = '\0';
    snprintf (line, sizeof (line), PLACED ("{\"nodes\":[\"%s\"],\"cores\":[[0]]}"), name);
    char why[128] = "";
    ck_assert_msg (reply_fast_agrees (line, strlen (line), why, sizeof (why)) == 1, "%s", why);
    /* a control character or DEL in a name */
    assert_declined (MEMBER ("\"label\":\"a\x7f\""), -1);
    assert_declined (MEMBER ("\"label\":\"a\tb\""), 0);
    /* over the line limit, whatever it holds */
    struct proto_fast_reply r;
    ck_assert_int_eq (proto_fast_release_reply (releases[0], (size_t) PROTO_MAX_REPLY + 1, &r), 1);
}
END_TEST

/* Random edits of the lines above: the fast lane declines, or reads what
 * the jansson path reads; it never accepts what that path refuses. */
START_TEST (mutations_never_disagree)
{
    static const char alphabet[] = "{}[]:,\" \\0123456789.-eEtrufalsn\n\x01\x7f\xc3";
    const char *const *sets[] = { leases, releases, fallbacks };
    const size_t nsets[] = { sizeof (leases) / sizeof (leases[0]),
                             sizeof (releases) / sizeof (releases[0]),
                             sizeof (fallbacks) / sizeof (fallbacks[0]) };
    uint64_t state = 20240611;
    int decoded = 0, declined = 0;
    for (size_t k = 0; k < 3; k++)
        for (size_t g = 0; g < nsets[k]; g++)
            for (int round = 0; round < 2000; round++) {
                char line[1024];
                size_t n = strlen (sets[k][g]);
                memcpy (line, sets[k][g], n);
                n = mutate_line (line, n, sizeof (line), 1 + round % 3, alphabet, &state);
                char why[128] = "";
                int rc = reply_fast_agrees (line, n, why, sizeof (why));
                ck_assert_msg (rc >= 0, "%s: %.*s", why, (int) n, line);
                decoded += rc == 1;
                declined += rc == 0;
            }
    /* both outcomes were exercised */
    ck_assert_int_gt (decoded, 1000);
    ck_assert_int_gt (declined, 1000);
}
END_TEST

/* ---- libberth ----------------------------------------------------------- */

/* A lease as berth_acquire makes it from line through the jansson path. */
static berth_lease_t *slow_lease (const char *line)
{
    json_t *msg;
    berth_error_t e;
    berth_client_error_t err;
    ck_assert_int_eq (proto_parse_message (line, strlen (line), &msg, &e), 0);
    json_object_del (msg, "id");
    json_object_del (msg, "ok");
    berth_lease_t *l = lease_from_json (msg, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    json_decref (msg);
    return l;
}

static berth_lease_t *fast_lease (const char *line)
{
    struct proto_fast_reply r;
    struct proto_lease d;
    berth_client_error_t err;
    size_t n = strlen (line);
    while (n && line[n - 1] == '\n')     /* as libberth hands it over */
        n--;
    ck_assert_int_eq (proto_fast_lease_reply (line, n, &r, &d), 0);
    char *copy = malloc (n);
    memcpy (copy, line, n);
    berth_lease_t *l = lease_from_fast (&d, copy, n, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    ck_assert_ptr_null (d.id);      /* taken */
    return l;
}

START_TEST (lease_objects_same)
{
    for (size_t i = 0; i < sizeof (leases) / sizeof (leases[0]); i++) {
        berth_lease_t *a = slow_lease (leases[i]), *b = fast_lease (leases[i]);
        char *ja = berth_lease_json (a), *jb = berth_lease_json (b);
        ck_assert_ptr_nonnull (ja);
        ck_assert_str_eq (ja, jb);
        ck_assert_ptr_null (strstr (jb, "\"ok\""));
        free (ja);
        free (jb);
        ck_assert_ptr_null (berth_lease_warning (b));
        ck_assert_int_eq (berth_lease_nenv (a), berth_lease_nenv (b));
        for (int k = 0; k < berth_lease_nenv (a); k++) {
            ck_assert_str_eq (berth_lease_env_name (a, k), berth_lease_env_name (b, k));
            ck_assert_str_eq (berth_lease_env_value (a, k), berth_lease_env_value (b, k));
        }
        ck_assert_ptr_null (berth_lease_env_name (b, berth_lease_nenv (b)));
        ck_assert_str_eq (berth_lease_id (a), berth_lease_id (b));
        const berth_launch_t *la = berth_lease_launch (a), *lb = berth_lease_launch (b);
        ck_assert_int_eq (berth_launch_nset (la), berth_launch_nset (lb));
        ck_assert_int_eq (berth_launch_nunset (la), berth_launch_nunset (lb));
        ck_assert (!berth_launch_argv (la) == !berth_launch_argv (lb));
        berth_lease_free (a);
        berth_lease_free (b);
    }
    /* derived once, on first use, and the same pointers after */
    berth_lease_t *l = fast_lease (leases[0]);
    ck_assert_int_eq (berth_lease_nenv (l), 5);
    const char *v = berth_lease_env_value (l, 2);
    ck_assert_str_eq (berth_lease_env_name (l, 2), "BERTH_CORES");
    ck_assert_str_eq (v, "0");
    ck_assert_ptr_eq (berth_lease_env_value (l, 2), v);
    ck_assert_str_eq (berth_lease_env_value (l, 4), "185");
    berth_lease_free (l);
    /* berthd's own env is shown as it is, nothing derived */
    l = fast_lease (leases[5]);
    ck_assert_int_eq (berth_lease_nenv (l), 0);
    berth_lease_free (l);
}
END_TEST

/* ---- request lines ------------------------------------------------------ */

static char *codec_line (struct proto_request *req, long long id)
{
    req->id = json_integer (id);
    json_t *o = proto_encode_request (req);
    char *line = proto_line (o);
    json_decref (o);
    json_decref (req->id);
    req->id = NULL;
    return line;
}

/* The direct line is the codec's, byte for byte; or NULL (want_fast 0). */
static void assert_same_line (struct proto_request *req, long long id, int want_fast)
{
    char *fast = request_line_fast (req, id), *slow = codec_line (req, id);
    ck_assert_ptr_nonnull (slow);
    if (want_fast)
        ck_assert_msg (fast != NULL, "not written directly: %s", slow);
    else
        ck_assert_msg (fast == NULL, "written directly: %s", slow);
    if (fast)
        ck_assert_str_eq (fast, slow);
    free (fast);
    free (slow);
}

START_TEST (request_lines_same)
{
    struct proto_request req;
    proto_request_init (&req, PROTO_ACQUIRE);
    assert_same_line (&req, 1, 1);
    req.acquire.step.cores = 1;
    assert_same_line (&req, 123456789012LL, 1);
    assert_same_line (&req, LLONG_MIN, 1);
    assert_same_line (&req, LLONG_MAX, 1);
    struct step_request *s = &req.acquire.step;
    s->ntasks = 4, s->min_tasks = 2, s->cpus_per_task = 3, s->min_cpus_per_task = 1;
    s->min_cores = 1, s->gpus = 0, s->min_gpus = 0, s->gpus_per_task = 1;
    s->min_gpus_per_task = 0, s->memory = (int64_t) 1 << 40, s->min_memory = 1;
    s->may_span_nodes = 0, s->local = true, s->priority = -5, s->timeout = 0;
    req.acquire.wait = false, req.acquire.detach = true, req.acquire.ttl = 3600;
    req.acquire.owner_pid = 4194304, req.acquire.env = true, req.acquire.duration = 0.1;
    char label[] = "ocean run/1 ~!@#$%^&*()_+{}[]:;'<>,.?|`";
    char *argv[] = { "srun", "-n", "4", "./model --in=a b", NULL };
    s->label = label;
    s->argv = argv;
    assert_same_line (&req, 2, 1);
    s->may_span_nodes = 1, s->timeout = 31622400, req.acquire.ttl = 1.0 / 3;
    req.acquire.duration = 123456.789;
    assert_same_line (&req, -1, 1);
    /* strings jansson escapes or checks: the codec writes those */
    char quoted[] = "a\"b", slash[] = "a\\b", tab[] = "a\tb", utf8[] = "\xc3\xa9t\xc3\xa9",
         del[] = "a\x7f";
    char *odd[] = { quoted, slash, tab, utf8, del };
    for (size_t i = 0; i < 5; i++) {
        s->label = odd[i];
        assert_same_line (&req, 3, 0);
        s->label = label;
        argv[3] = odd[i];
        assert_same_line (&req, 3, 0);
        argv[3] = "./m";
    }
    assert_same_line (&req, 3, 1);
    s->label = NULL;
    s->argv = NULL;

    proto_request_init (&req, PROTO_RELEASE);
    req.release.lease = "L17";
    assert_same_line (&req, 7, 1);
    req.release.lease = "L\"1";
    assert_same_line (&req, 7, 0);
    req.release.lease = NULL;
    ck_assert_ptr_null (request_line_fast (&req, 7));

    /* other ops are the codec's */
    proto_request_init (&req, PROTO_STATUS);
    assert_same_line (&req, 8, 0);
    proto_request_init (&req, PROTO_RECLAIM);
    req.reclaim.lease = "L1";
    assert_same_line (&req, 9, 0);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("reply_fast");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, leases_agree);
    tcase_add_test (tc, releases_agree);
    tcase_add_test (tc, values);
    tcase_add_test (tc, declined);
    tcase_add_test (tc, mutations_never_disagree);
    tcase_add_test (tc, lease_objects_same);
    tcase_add_test (tc, request_lines_same);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
