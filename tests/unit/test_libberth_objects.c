/* SPDX-License-Identifier: MIT */
/* libberth without a daemon: requests built field by field, leases and
 * events decoded from berthd's lines, connection errors. The operations
 * against a real berthd are in tests/integration/test_libberth.c. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libberth_private.h"
#include "testutil.h"

#define HAS(text, want) ck_assert_msg (strstr (text, want), "missing [%s] in [%s]", want, text)

/* The request as the codec sends it. */
static json_t *encoded (const berth_request_t *r)
{
    struct proto_request req;
    proto_request_init (&req, PROTO_ACQUIRE);
    req.acquire = r->a;
    req.id = json_integer (1);
    json_t *o = proto_encode_request (&req);
    json_decref (req.id);
    ck_assert_ptr_nonnull (o);
    return o;
}

START_TEST (test_request_fields)
{
    berth_client_error_t err;
    berth_request_t *r = berth_request_new ();
    const char *argv[] = { "./model", "--case", "qu240", NULL };
    ck_assert_int_eq (berth_request_set_int (r, "ntasks", 16, &err), 0);
    ck_assert_int_eq (berth_request_set_int (r, "cpus_per_task", 2, &err), 0);
    ck_assert_int_eq (berth_request_set_int (r, "memory", 8000, &err), 0);
    ck_assert_int_eq (berth_request_set_int (r, "gpus", 0, &err), 0);
    ck_assert_int_eq (berth_request_set_int (r, "priority", -5, &err), 0);
    ck_assert_int_eq (berth_request_set_bool (r, "may_span_nodes", 0, &err), 0);
    ck_assert_int_eq (berth_request_set_bool (r, "detach", 1, &err), 0);
    ck_assert_int_eq (berth_request_set_bool (r, "wait", 0, &err), 0);
    ck_assert_int_eq (berth_request_set_string (r, "label", "ocean", &err), 0);
    ck_assert_int_eq (berth_request_set_string (r, "label", "ocean_qu240", &err), 0);
    ck_assert_int_eq (berth_request_set_seconds (r, "timeout", 2.5, &err), 0);
    ck_assert_int_eq (berth_request_set_seconds (r, "ttl", 60, &err), 0);
    ck_assert_int_eq (berth_request_set_int (r, "owner_pid", 4242, &err), 0);
    ck_assert_int_eq (berth_request_set_argv (r, argv, &err), 0);
    ck_assert_int_eq (berth_request_set_argv (r, argv + 1, &err), 0);   /* replaces */
    json_t *o = encoded (r);
    json_t *want = json_pack ("{s:s s:i s:i s:i s:i s:i s:i s:b s:b s:b s:s s:f s:f s:i s:[s s]}",
                              "op", "acquire", "id", 1, "ntasks", 16, "cpus_per_task", 2,
                              "memory", 8000, "gpus", 0, "priority", -5, "may_span_nodes", 0,
                              "detach", 1, "wait", 0, "label", "ocean_qu240", "timeout", 2.5,
                              "ttl", 60.0, "owner_pid", 4242, "argv", "--case", "qu240");
    char *got = json_dumps (o, JSON_SORT_KEYS), *w = json_dumps (want, JSON_SORT_KEYS);
    ck_assert_str_eq (got, w);
    free (got);
    free (w);
    json_decref (o);
    json_decref (want);
    berth_request_free (r);
}
END_TEST

START_TEST (test_request_defaults)
{
    berth_request_t *r = berth_request_new ();
    json_t *o = encoded (r);
    char *got = json_dumps (o, JSON_SORT_KEYS);
    ck_assert_str_eq (got, "{\"id\": 1, \"op\": \"acquire\"}");
    free (got);
    json_decref (o);
    berth_request_free (r);
    berth_request_free (NULL);
}
END_TEST

START_TEST (test_request_errors)
{
    berth_client_error_t err;
    berth_request_t *r = berth_request_new ();
    ck_assert_int_eq (berth_request_set_int (r, "cores", 4, &err), 0);

    ck_assert_int_eq (berth_request_set_int (r, "memroy", 4, &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_INVALID_REQUEST);
    HAS (err.message, "unknown request field 'memroy'");
    ck_assert_int_eq (berth_request_set_int (r, "label", 4, &err), -1);
    HAS (err.message, "request field 'label' takes a string");
    ck_assert_int_eq (berth_request_set_bool (r, "cores", 1, &err), -1);
    HAS (err.message, "request field 'cores' takes an integer");
    ck_assert_int_eq (berth_request_set_string (r, "timeout", "5", &err), -1);
    HAS (err.message, "request field 'timeout' takes a number of seconds");
    ck_assert_int_eq (berth_request_set_seconds (r, "wait", 5, &err), -1);
    HAS (err.message, "request field 'wait' takes a boolean");

    ck_assert_int_eq (berth_request_set_int (r, "cores", 0, &err), -1);
    HAS (err.message, "request field 'cores' must be from 1 to 1048576, got 0");
    ck_assert_int_eq (berth_request_set_int (r, "gpus", -1, &err), -1);
    HAS (err.message, "'gpus' must be from 0 to 1048576, got -1");
    ck_assert_int_eq (berth_request_set_int (r, "memory", (1LL << 40) + 1, &err), -1);
    HAS (err.message, "'memory' must be from 1 to 1099511627776, got 1099511627777");
    ck_assert_int_eq (berth_request_set_int (r, "priority", 1 << 21, &err), -1);
    HAS (err.message, "'priority' must be from -1048576 to 1048576, got 2097152");
    ck_assert_int_eq (berth_request_set_int (r, "owner_pid", 0, &err), -1);
    HAS (err.message, "'owner_pid' must be from 1 to 4194304, got 0");

    ck_assert_int_eq (berth_request_set_string (r, "label", "", &err), -1);
    HAS (err.message, "'label' must be 1 to 255 bytes, got 0");
    ck_assert_int_eq (berth_request_set_string (r, "label", NULL, &err), -1);
    HAS (err.message, "'label' must be 1 to 255 bytes, got 0");
    char long_label[300];
    memset (long_label, 'x', sizeof (long_label) - 1);
    long_label[299] = '\0';
    ck_assert_int_eq (berth_request_set_string (r, "label", long_label, &err), -1);
    HAS (err.message, "got 299");
    ck_assert_int_eq (berth_request_set_string (r, "label", "a\nb", &err), -1);
    HAS (err.message, "'label' may not hold control characters (byte 1 of");

    ck_assert_int_eq (berth_request_set_seconds (r, "timeout", -1, &err), -1);
    HAS (err.message, "'timeout' must be from 0 to 31622400 seconds, got -1");
    ck_assert_int_eq (berth_request_set_seconds (r, "ttl", NAN, &err), -1);
    HAS (err.message, "'ttl' must be from 0 to 31622400 seconds");
    ck_assert_int_eq (berth_request_set_seconds (r, "ttl", 4e7, &err), -1);
    HAS (err.message, "got 4e+07");

    const char *empty[] = { "", "x", NULL }, *none[] = { NULL };
    ck_assert_int_eq (berth_request_set_argv (r, empty, &err), -1);
    HAS (err.message, "argv must name a program (a non-empty first item)");
    ck_assert_int_eq (berth_request_set_argv (r, none, &err), -1);
    ck_assert_int_eq (berth_request_set_argv (r, NULL, &err), -1);
    const char **many = calloc (4098, sizeof (*many));
    for (int i = 0; i < 4097; i++)
        many[i] = "x";
    ck_assert_int_eq (berth_request_set_argv (r, many, &err), -1);
    HAS (err.message, "argv has 4097 items, over the limit of 4096");
    free (many);

    ck_assert_int_eq (berth_request_set_int (NULL, "cores", 1, &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    ck_assert_int_eq (berth_request_set_int (r, NULL, 1, &err), -1);
    ck_assert_int_eq (berth_request_set_argv (NULL, empty, &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    ck_assert_int_eq (berth_request_set_int (r, "cores", 0, NULL), -1);   /* err may be NULL */

    /* nothing of the failed calls stuck */
    json_t *o = encoded (r);
    char *got = json_dumps (o, JSON_SORT_KEYS);
    ck_assert_str_eq (got, "{\"cores\": 4, \"id\": 1, \"op\": \"acquire\"}");
    free (got);
    json_decref (o);
    berth_request_free (r);
}
END_TEST

static json_t *parse (const char *text)
{
    json_error_t je;
    json_t *o = json_loads (text, 0, &je);
    ck_assert_msg (o != NULL, "%s", je.text);
    return o;
}

static const char *env_of (const berth_lease_t *l, const char *name)
{
    for (int i = 0; i < berth_lease_nenv (l); i++)
        if (!strcmp (berth_lease_env_name (l, i), name))
            return berth_lease_env_value (l, i);
    return NULL;
}

START_TEST (test_lease)
{
    berth_client_error_t err;
    json_t *o = parse ("{\"lease\": \"L17\", \"label\": \"ocean\", \"placement\": {\"nodes\": "
                       "[\"a\", \"b\"], \"cores\": [[8, 0, 1, 2, 3], [8, 0, 1, 2, 3]], \"gpus\": 2,"
                       " \"gpu_ids\": [0, 1]}, \"memory_cap\": null, \"budget_mb\": 6000,"
                       " \"argv\": [\"srun\", \"-n\", \"2\", \"./m\"], \"env_delta\": {\"unset\":"
                       " [\"SLURM_CPU_BIND\"], \"set\": {\"OMP_NUM_THREADS\": \"5\"}},"
                       " \"granted\": 1754300000.25, \"owner_pid\": 77, \"later\": [1]}");
    berth_lease_t *l = lease_from_json (o, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    ck_assert_str_eq (berth_lease_id (l), "L17");
    ck_assert_str_eq (berth_lease_label (l), "ocean");
    ck_assert_int_eq (berth_lease_nnodes (l), 2);
    ck_assert_str_eq (berth_lease_node (l, 1), "b");
    ck_assert_ptr_null (berth_lease_node (l, 2));
    int n;
    const int *c = berth_lease_cores (l, 0, &n);
    ck_assert_int_eq (n, 5);
    ck_assert_int_eq (c[0], 8);
    ck_assert_ptr_null (berth_lease_cores (l, -1, &n));
    ck_assert_int_eq (n, 0);
    ck_assert_int_eq (berth_lease_gpus (l), 2);
    const int *g = berth_lease_gpu_ids (l, &n);
    ck_assert_int_eq (n, 2);
    ck_assert_int_eq (g[1], 1);
    ck_assert_int_eq (berth_lease_memory_cap (l), -1);
    ck_assert_int_eq (berth_lease_budget_mb (l), 6000);
    ck_assert_int_eq (berth_lease_owner_pid (l), 77);
    ck_assert (berth_lease_granted (l) == 1754300000.25);
    /* berthd sent no env: derived from the placement the same way */
    ck_assert_int_eq (berth_lease_nenv (l), 5);
    ck_assert_str_eq (env_of (l, "BERTH_LEASE"), "L17");
    ck_assert_str_eq (env_of (l, "BERTH_NODES"), "a,b");
    ck_assert_str_eq (env_of (l, "BERTH_CORES"), "0-3,8");
    ck_assert_str_eq (env_of (l, "BERTH_GPUS"), "0,1");
    ck_assert_str_eq (env_of (l, "BERTH_MEMORY_MB"), "6000");
    const berth_launch_t *la = berth_lease_launch (l);
    ck_assert_str_eq (berth_launch_argv (la)[0], "srun");
    ck_assert_ptr_null (berth_launch_argv (la)[4]);
    ck_assert_int_eq (berth_launch_nunset (la), 1);
    ck_assert_str_eq (berth_launch_unset (la, 0), "SLURM_CPU_BIND");
    ck_assert_int_eq (berth_launch_nset (la), 1);
    ck_assert_str_eq (berth_launch_set_name (la, 0), "OMP_NUM_THREADS");
    ck_assert_str_eq (berth_launch_set_value (la, 0), "5");
    ck_assert_ptr_null (berth_launch_set_value (la, 1));
    setenv ("SLURM_CPU_BIND", "x", 1);
    ck_assert_int_eq (berth_launch_apply_env (la, &err), 0);
    ck_assert_ptr_null (getenv ("SLURM_CPU_BIND"));
    ck_assert_str_eq (getenv ("OMP_NUM_THREADS"), "5");
    /* the JSON is berthd's, members this library does not know included */
    char *s = berth_lease_json (l);
    HAS (s, "\"later\":[1]");
    HAS (s, "\"lease\":\"L17\"");
    free (s);
    berth_lease_free (l);
    json_decref (o);
}
END_TEST

START_TEST (test_lease_env_from_berthd)
{
    berth_client_error_t err;
    json_t *o = parse ("{\"lease\": \"L2\", \"placement\": {\"nodes\": [\"a\"], \"cores\": [[1]],"
                       " \"gpus\": 0, \"gpu_ids\": null}, \"memory_cap\": 500, \"budget_mb\": 500,"
                       " \"env\": {\"BERTH_LEASE\": \"L2\", \"BERTH_CORES\": \"1\", \"X\": \"y\"}}");
    berth_lease_t *l = lease_from_json (o, &err);
    ck_assert_msg (l != NULL, "%s", err.message);
    ck_assert_int_eq (berth_lease_nenv (l), 3);
    ck_assert_str_eq (env_of (l, "X"), "y");
    ck_assert_ptr_null (berth_lease_label (l));
    ck_assert_ptr_null (berth_launch_argv (berth_lease_launch (l)));
    int n = -1;
    ck_assert_ptr_nonnull (berth_lease_gpu_ids (l, &n));     /* none: known, empty */
    ck_assert_int_eq (n, 0);
    berth_lease_free (l);
    json_decref (o);

    /* derived: the cap wins over the budget, no GPUs is empty */
    o = parse ("{\"lease\": \"L3\", \"placement\": {\"nodes\": [\"a\"], \"cores\": [[4, 5]],"
               " \"gpus\": 0}, \"memory_cap\": 700, \"budget_mb\": 500}");
    l = lease_from_json (o, &err);
    ck_assert_str_eq (env_of (l, "BERTH_MEMORY_MB"), "700");
    ck_assert_str_eq (env_of (l, "BERTH_GPUS"), "");
    ck_assert_str_eq (env_of (l, "BERTH_CORES"), "4-5");
    berth_lease_free (l);
    json_decref (o);
    /* GPUs whose indices berthd does not know */
    o = parse ("{\"lease\": \"L4\", \"placement\": {\"nodes\": [\"a\"], \"cores\": [[0]],"
               " \"gpus\": 2, \"gpu_ids\": null}}");
    l = lease_from_json (o, &err);
    ck_assert_ptr_null (berth_lease_gpu_ids (l, &n));
    ck_assert_int_eq (n, 0);
    ck_assert_ptr_null (env_of (l, "BERTH_MEMORY_MB"));   /* no memory figure */
    ck_assert_int_eq (berth_lease_nenv (l), 4);
    berth_lease_free (l);
    json_decref (o);
}
END_TEST

START_TEST (test_lease_malformed)
{
    berth_client_error_t err;
    json_t *o = parse ("{\"lease\": \"L1\", \"placement\": {\"nodes\": [\"a\"], \"cores\": [[-1]]}}");
    ck_assert_ptr_null (lease_from_json (o, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_PROTOCOL);
    HAS (err.message, "placement.cores[0][0]");
    json_decref (o);
    o = parse ("{\"placement\": {\"nodes\": [\"a\"], \"cores\": [[1]]}}");
    ck_assert_ptr_null (lease_from_json (o, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_PROTOCOL);
    HAS (err.message, "lease");
    json_decref (o);
}
END_TEST

START_TEST (test_events)
{
    berth_client_error_t err;
    json_t *o = parse ("{\"event\": \"waited\", \"time\": 5.5, \"label\": \"m\", \"position\": 2,"
                       " \"why\": \"no room\"}");
    berth_event_t *ev = event_from_json (o, &err);
    ck_assert_msg (ev != NULL, "%s", err.message);
    ck_assert_int_eq (berth_event_kind (ev), BERTH_EVENT_WAITED);
    ck_assert_str_eq (berth_event_name (ev), "waited");
    ck_assert (berth_event_time (ev) == 5.5);
    ck_assert_str_eq (berth_event_label (ev), "m");
    ck_assert_int_eq (berth_event_position (ev), 2);
    ck_assert_str_eq (berth_event_why (ev), "no room");
    ck_assert_ptr_null (berth_event_lease (ev));
    ck_assert_ptr_null (berth_event_error_code (ev));
    char *s = berth_event_json (ev);
    HAS (s, "\"position\":2");
    free (s);
    berth_event_free (ev);
    json_decref (o);

    o = parse ("{\"event\": \"granted\", \"time\": 6, \"lease\": \"L5\", \"label\": \"g\","
               " \"placement\": {\"nodes\": [\"a\"], \"cores\": [[0, 1]], \"gpus\": 0}}");
    ev = event_from_json (o, &err);
    ck_assert_msg (ev != NULL, "%s", err.message);
    ck_assert_int_eq (berth_event_kind (ev), BERTH_EVENT_GRANTED);
    ck_assert_str_eq (berth_event_lease_id (ev), "L5");
    ck_assert_str_eq (berth_event_label (ev), "g");
    ck_assert_str_eq (berth_lease_env_value (berth_event_lease (ev), 2), "0-1");
    berth_event_free (ev);
    json_decref (o);

    o = parse ("{\"event\": \"released\", \"time\": 7, \"lease\": \"L5\", \"reason\": \"disconnected\"}");
    ev = event_from_json (o, &err);
    ck_assert_int_eq (berth_event_kind (ev), BERTH_EVENT_RELEASED);
    ck_assert_str_eq (berth_event_why (ev), "disconnected");
    ck_assert_ptr_null (berth_event_label (ev));
    berth_event_free (ev);
    json_decref (o);

    o = parse ("{\"event\": \"refused\", \"time\": 8, \"error\": {\"code\": \"timeout\","
               " \"message\": \"waited 1 s\"}}");
    ev = event_from_json (o, &err);
    ck_assert_int_eq (berth_event_kind (ev), BERTH_EVENT_REFUSED);
    ck_assert_str_eq (berth_event_error_code (ev), "timeout");
    ck_assert_str_eq (berth_event_error_message (ev), "waited 1 s");
    berth_event_free (ev);
    json_decref (o);

    o = parse ("{\"event\": \"exploded\", \"time\": 8}");
    ck_assert_ptr_null (event_from_json (o, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_PROTOCOL);
    HAS (err.message, "granted, waited, released, refused or allocation, got \"exploded\"");
    json_decref (o);
    berth_event_free (NULL);
}
END_TEST

START_TEST (test_connect_errors)
{
    berth_client_error_t err;
    char path[300];
    memset (path, 'p', sizeof (path) - 1);
    path[0] = '/';
    path[299] = '\0';
    ck_assert_ptr_null (berth_connect (path, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_CONNECT);
    HAS (err.message, "is 299 bytes, over the 107 a Unix socket allows");
    ck_assert_ptr_null (berth_connect ("/nonexistent/berth.sock", &err));
    ck_assert_str_eq (err.code, BERTH_ERR_CONNECT);
    HAS (err.message, "no berthd socket at /nonexistent/berth.sock; start berthd first");
    setenv ("BERTH_SOCKET", "/nonexistent/env.sock", 1);
    ck_assert_ptr_null (berth_connect (NULL, &err));
    HAS (err.message, "no berthd socket at /nonexistent/env.sock (from BERTH_SOCKET)");
    unsetenv ("BERTH_SOCKET");
    setenv ("XDG_RUNTIME_DIR", "/nonexistent/xdg", 1);
    setenv ("SLURM_JOB_ID", "99", 1);
    ck_assert_ptr_null (berth_connect (NULL, &err));
    HAS (err.message, "no berthd socket at /nonexistent/xdg/berth/99.sock;");
    unsetenv ("SLURM_JOB_ID");
    berth_close (NULL);
    ck_assert_int_eq (berth_fd (NULL), -1);
    ck_assert_ptr_null (berth_socket_path (NULL));
}
END_TEST

START_TEST (test_null_client)
{
    berth_client_error_t err;
    berth_request_t *r = berth_request_new ();
    ck_assert_ptr_null (berth_acquire (NULL, r, &err));
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    ck_assert_int_eq (berth_release (NULL, "L1", &err), -1);
    ck_assert_str_eq (err.code, BERTH_ERR_USAGE);
    ck_assert_ptr_null (berth_status (NULL, &err));
    ck_assert_ptr_null (berth_resources (NULL, NULL, &err));
    ck_assert_int_eq (berth_watch (NULL, 0, &err), -1);
    ck_assert_int_eq (berth_shutdown (NULL, BERTH_SHUTDOWN_DRAIN, -1, &err), -1);
    ck_assert_ptr_null (berth_render (NULL, "{}", 1, 0, -1, NULL, &err));
    HAS (err.message, "berth_render: needs a client");
    int v;
    ck_assert_int_eq (berth_hello (NULL, &v, NULL, &err), -1);
    ck_assert_ptr_null (berth_lease_id (NULL));
    ck_assert_int_eq (berth_lease_nnodes (NULL), 0);
    ck_assert_int_eq (berth_launch_apply_env (NULL, &err), -1);
    berth_request_free (r);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("libberth_objects");
    TCase *tc = tcase_create ("objects");
    tcase_add_test (tc, test_request_fields);
    tcase_add_test (tc, test_request_defaults);
    tcase_add_test (tc, test_request_errors);
    tcase_add_test (tc, test_lease);
    tcase_add_test (tc, test_lease_env_from_berthd);
    tcase_add_test (tc, test_lease_malformed);
    tcase_add_test (tc, test_events);
    tcase_add_test (tc, test_connect_errors);
    tcase_add_test (tc, test_null_client);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
