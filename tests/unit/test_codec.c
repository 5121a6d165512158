/* SPDX-License-Identifier: MIT */
/* The wire protocol codec: round trips of every request, reply and event,
 * and the refusal of every kind of malformed line (field named, id echoed). */
#include <stdlib.h>
#include <string.h>

#include "berth_config.h"
#include "codec.h"
#include "testutil.h"

static int decode (const char *line, struct proto_request *r, berth_error_t *e)
{
    return proto_decode_request (line, strlen (line), r, e);
}

/* The id a failed decode kept, as compact JSON ("null" when none). */
static char *id_text (const struct proto_request *r)
{
    return json_dumps (r->id ? r->id : json_null (), JSON_ENCODE_ANY | JSON_COMPACT);
}

/* Encode, frame, decode again. */
static void roundtrip (const struct proto_request *in, struct proto_request *out)
{
    berth_error_t e;
    json_t *o = proto_encode_request (in);
    ck_assert_ptr_nonnull (o);
    char *line = proto_line (o);
    ck_assert_ptr_nonnull (line);
    ck_assert_int_eq (line[strlen (line) - 1], '\n');
    ck_assert_ptr_eq (strchr (line, '\n'), line + strlen (line) - 1);   /* one line */
    if (proto_decode_request (line, strlen (line), out, &e) < 0)
        ck_abort_msg ("%s -> %s", line, e.text);
    ck_assert (json_equal (out->id, in->id));
    ck_assert_int_eq (out->op, in->op);
    free (line);
    json_decref (o);
}

/* ---- malformed requests ------------------------------------------------ */

struct bad_case {
    const char *line;
    const char *code;
    const char *want1, *want2;  /* substrings of the message */
    const char *id;             /* echoed id as compact JSON */
};

#define INV PROTO_ERR_INVALID_REQUEST
static const struct bad_case bad_cases[] = {
    /* the daemon check's lines */
    { "{not json", INV, "not valid JSON", "one JSON object per line", "null" },
    { "{\"op\": 42, \"id\": 1}", INV, "field 'op' must be a string", "got 42", "1" },
    { "{\"op\": \"acquire\", \"id\": 2, \"cores\": -3}", INV,
      "acquire: field 'cores' must be a positive integer", "got -3", "2" },
    { "{\"op\": \"no-such-op\", \"id\": 3}", INV, "unknown op \"no-such-op\"",
      "known ops: hello, acquire", "3" },
    { "{\"op\": \"status\", \"id\": 4, \"queue_only\": 1}", INV,
      "field 'queue_only' must be true or false", "got 1", "4" },
    { "{\"op\": \"status\", \"id\": 4, \"pid\": 0}", INV,
      "field 'pid' must be a positive integer", "got 0", "4" },
    { "{\"op\": \"status\", \"id\": 5, \"brief\": 1001}", INV,
      "field 'brief' must be", "got 1001", "5" },
    { "{\"op\": \"status\", \"id\": 5, \"brief\": \"9\"}", INV,
      "field 'brief' must be", "got \"9\"", "5" },
    { "{\"op\": \"status\", \"id\": 5, \"brief\": 9, \"queue_only\": true}", INV,
      "field 'brief' is a view of its own", "drop 'queue_only'", "5" },
    { "{\"op\": \"status\", \"id\": 5, \"brief\": 9, \"pid\": 7}", INV,
      "field 'brief' is a view of its own", "drop 'pid'", "5" },
    /* framing and envelope */
    { "", INV, "not valid JSON", "", "null" },
    { "[1,2]", INV, "must be a JSON object", "got [1,2]", "null" },
    { "\"status\"", INV, "must be a JSON object", "got \"status\"", "null" },
    { "{\"op\":\"status\",\"id\":1} x", INV, "not valid JSON", "end of file expected", "null" },
    { "{\"op\":\"status\",\"id\":1}{\"op\":\"status\",\"id\":2}", INV, "not valid JSON", "", "null" },
    { "{\"op\":\"status\",\"id\":1,\"id\":2}", INV, "not valid JSON", "duplicate object key", "null" },
    { "{\"op\":\"status\",\"id\":1,\"op\":\"status\"}", INV, "duplicate", "", "null" },
    { "{\"op\":\"status\",\"id\":1,\"x\":\"\xff\"}", INV, "not valid JSON", "unable to decode byte 0xff", "null" },
    { "{\"op\":\"status\",\"id\":1,\"x\":\"\xc3\"}", INV, "not valid JSON", "", "null" },
    { "{\"op\":\"status\",\"id\":\"\\u0000\"}", INV, "not valid JSON", "\\u0000", "null" },
    { "{\"op\":\"acquire\",\"id\":1,\"cores\":99999999999999999999}", INV, "too big integer", "", "null" },
    { "{\"op\":\"acquire\",\"id\":1,\"timeout\":1e400}", INV, "real number overflow", "", "null" },
    { "{\"op\":\"status\"}", INV, "no 'id'", "", "null" },
    { "{\"id\":7}", INV, "no 'op'", "one of hello", "7" },
    { "{\"id\":\"a-7\",\"op\":null}", INV, "field 'op' must be a string", "got null", "\"a-7\"" },
    { "{\"op\":\"status\",\"id\":1.5}", INV, "field 'id' must be an integer or a string", "got 1.5", "null" },
    { "{\"op\":\"status\",\"id\":true}", INV, "field 'id'", "got true", "null" },
    { "{\"op\":\"status\",\"id\":null}", INV, "field 'id'", "got null", "null" },
    { "{\"op\":\"status\",\"id\":[1]}", INV, "field 'id'", "got [1]", "null" },
    { "{\"op\":\"status\",\"id\":{\"a\":1}}", INV, "field 'id'", "", "null" },
    { "{\"op\":\"STATUS\",\"id\":9}", INV, "unknown op \"STATUS\"", "", "9" },
    /* unknown keys */
    { "{\"op\":\"status\",\"id\":\"abc\",\"pad\":\"x\"}", INV, "status: unknown field(s): pad", "", "\"abc\"" },
    /* members the format names, even as null, do not hide another one */
    { "{\"op\":\"acquire\",\"id\":1,\"ntasks\":null,\"cpus_per_task\":null,\"min_tasks\":null,\"min_cpus_per_task\":null,\"cores\":null,\"min_cores\":null,\"gpus\":null,\"min_gpus\":null,\"gpus_per_task\":null,\"min_gpus_per_task\":null,\"memory\":null,\"min_memory\":null,\"may_span_nodes\":null,\"local\":null,\"label\":null,\"priority\":null,\"timeout\":null,\"wait\":null,\"argv\":null,\"detach\":null,\"ttl\":null,\"owner_pid\":null,\"env\":null,\"duration\":null,\"zz\":1}", INV, "acquire: unknown field(s): zz", "", "1" },
    { "{\"op\":\"release\",\"id\":2,\"lease\":\"L1\",\"leases\":[\"L2\"]}", INV, "release: unknown field(s): leases", "", "2" },
    /* a missing member is named before an unknown one, as jansson does */
    { "{\"op\":\"release\",\"id\":3,\"leases\":\"L1\"}", INV, "release: missing required field 'lease'", "", "3" },
    { "{\"op\":\"render\",\"id\":4,\"argv\":[\"a\"],\"x\":1}", INV, "render: missing required field 'placement'", "", "4" },
    { "{\"op\":\"acquire\",\"id\":1,\"zz\":1,\"cores\":2,\"yy\":2}", INV, "acquire: unknown field(s)", "zz, yy", "1" },
    { "{\"op\":\"hello\",\"id\":1,\"versions\":[1]}", INV, "hello: unknown field(s): versions", "", "1" },
    { "{\"op\":\"watch\",\"id\":1,\"lease\":\"L1\"}", INV, "watch: unknown field(s): lease", "", "1" },
    { "{\"op\":\"shutdown\",\"id\":1,\"force\":true}", INV, "shutdown: unknown field(s): force", "", "1" },
    /* acquire: ranges and types */
    { "{\"op\":\"acquire\",\"id\":2,\"cores\":0}", INV, "field 'cores' must be a positive integer up to 1048576", "got 0", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"cores\":1048577}", INV, "'cores' must be a positive integer up to 1048576", "got 1048577", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"cores\":4294967297}", INV, "'cores'", "got 4294967297", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"cores\":\"4\"}", INV, "'cores' must be a positive integer", "got \"4\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"cores\":4.0}", INV, "'cores' must be a positive integer", "got 4.0", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"gpus\":-1}", INV, "'gpus' must be a non-negative integer", "got -1", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"memory\":0}", INV, "'memory' must be a positive integer up to 1099511627776", "got 0", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"memory\":1099511627777}", INV, "'memory'", "got 1099511627777", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"min_memory\":\"8G\"}", INV, "'min_memory' must be a positive integer", "got \"8G\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"priority\":2000000}", INV, "'priority' must be an integer from -1048576 to 1048576", "got 2000000", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"priority\":\"high\"}", INV, "'priority'", "got \"high\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"timeout\":-1}", INV, "'timeout' must be a number of seconds from 0 to 31622400", "got -1", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"timeout\":1e9}", INV, "'timeout' must be a number of seconds", "got 1000000000.0", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"timeout\":\"5\"}", INV, "'timeout'", "got \"5\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"wait\":\"yes\"}", INV, "field 'wait' must be true or false", "got \"yes\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"local\":1}", INV, "field 'local' must be true or false", "got 1", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"detach\":\"true\"}", INV, "field 'detach' must be true or false", "", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"env\":0}", INV, "field 'env' must be true or false", "", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"may_span_nodes\":\"no\"}", INV, "field 'may_span_nodes' must be true or false", "", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"label\":\"\"}", INV, "field 'label' must be a non-empty string", "got \"\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"label\":42}", INV, "field 'label' must be", "got 42", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"label\":\"a\\nb\"}", INV, "without control characters", "got \"a\\nb\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"argv\":[]}", INV, "field 'argv' must be a non-empty array", "got []", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"argv\":\"ls -l\"}", INV, "field 'argv' must be a non-empty array", "got \"ls -l\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"argv\":[\"ls\",3]}", INV, "field 'argv[1]' must be a string", "got 3", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"argv\":[\"ls\",null]}", INV, "field 'argv[1]' must be a string", "got null", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"argv\":[\"\"]}", INV, "field 'argv[0]' must be a non-empty string (the program)", "", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"ttl\":60}", INV, "field 'ttl' applies to detached leases only", "\"detach\": true", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"owner_pid\":77}", INV, "field 'owner_pid' applies to detached leases only", "", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"detach\":true,\"owner_pid\":0}", INV, "field 'owner_pid' must be a positive integer up to 4194304", "got 0", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"detach\":true,\"ttl\":-5}", INV, "field 'ttl' must be a number of seconds", "got -5", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"duration\":-1}", INV, "field 'duration' must be a number of seconds from 0 to 31622400", "got -1", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"duration\":\"1h\"}", INV, "field 'duration' must be a number of seconds", "got \"1h\"", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"duration\":31622401}", INV, "field 'duration' must be a number of seconds", "got 31622401", "2" },
    { "{\"op\":\"acquire\",\"id\":2,\"duration\":true}", INV, "field 'duration' must be a number of seconds", "got true", "2" },
    /* the other ops */
    { "{\"op\":\"hello\",\"id\":1,\"version\":0}", INV, "field 'version' must be a positive integer", "got 0", "1" },
    { "{\"op\":\"hello\",\"id\":1,\"version\":\"1\"}", INV, "field 'version'", "got \"1\"", "1" },
    { "{\"op\":\"hello\",\"id\":1,\"pipeline\":1}", INV, "field 'pipeline' must be true or false", "got 1", "1" },
    { "{\"op\":\"release\",\"id\":5}", INV, "release: missing required field 'lease'", "", "5" },
    { "{\"op\":\"release\",\"id\":5,\"lease\":17}", INV, "release: field 'lease' must be a non-empty string", "got 17", "5" },
    { "{\"op\":\"release\",\"id\":5,\"lease\":null}", INV, "release: field 'lease' must be a lease id", "got null", "5" },
    { "{\"op\":\"resources\",\"id\":5,\"lease\":[]}", INV, "resources: field 'lease'", "got []", "5" },
    { "{\"op\":\"watch\",\"id\":5,\"history\":\"all\"}", INV, "watch: field 'history' must be true or false", "", "5" },
    { "{\"op\":\"shutdown\",\"id\":5,\"mode\":\"now\"}", INV, "shutdown: field 'mode' must be \"drain\" or \"force\"", "got \"now\"", "5" },
    { "{\"op\":\"shutdown\",\"id\":5,\"mode\":1}", INV, "field 'mode'", "got 1", "5" },
    /* render and its placement */
    { "{\"op\":\"render\",\"id\":6,\"argv\":[\"a\"]}", INV, "render: missing required field 'placement'", "", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"n1\"],\"cores\":[[0]]}}", INV, "render: missing required field 'argv'", "", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":null,\"argv\":[\"a\"]}", INV, "render: field 'placement' must be an object", "got null", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":[],\"argv\":[\"a\"]}", INV, "render: placement: must be a JSON object", "", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"cores\":[[0],[1]]},\"argv\":[\"a\"]}", INV, "field 'placement.cores' must be one core id list ([[...]]) when nodes are not named", "got [[0],[1]]", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":\"n1\",\"cores\":[[0]]},\"argv\":[\"a\"]}", INV, "field 'placement.nodes' must be an array of node names", "got \"n1\"", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\",\"b\"],\"cores\":[[0],[0]],\"gpu_ids\":[[0]]},\"argv\":[\"a\"]}", INV, "field 'placement.gpu_ids' must be an array of 2 GPU id lists (one per node)", "got [[0]]", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\",\"b\"],\"cores\":[[0],[0]],\"gpu_ids\":[[0],3]},\"argv\":[\"a\"]}", INV, "field 'placement.gpu_ids[1]' must be an array of ids", "got 3", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"n\"],\"cores\":[[0]],\"foo\":1},\"argv\":[\"a\"]}", INV, "render: placement: unknown field(s): foo", "", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[],\"cores\":[]},\"argv\":[\"a\"]}", INV, "field 'placement.cores' must be one core id list", "got []", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\",\"b\"],\"cores\":[[0]]},\"argv\":[\"a\"]}", INV, "field 'placement.cores' must be an array of 2 core id lists", "got [[0]]", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[7],\"cores\":[[0]]},\"argv\":[\"a\"]}", INV, "field 'placement.nodes[0]' must be a non-empty string", "got 7", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\",null],\"cores\":[[0],[0]]},\"argv\":[\"a\"]}", INV, "field 'placement.nodes[1]' must be a node name", "got null", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[\"0-3\"]},\"argv\":[\"a\"]}", INV, "field 'placement.cores[0]' must be an array of ids", "got \"0-3\"", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0,-1]]},\"argv\":[\"a\"]}", INV, "field 'placement.cores[0][1]' must be a non-negative integer", "got -1", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0,null]]},\"argv\":[\"a\"]}", INV, "field 'placement.cores[0][1]' must be an id", "got null", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpus\":-2},\"argv\":[\"a\"]}", INV, "field 'placement.gpus' must be a non-negative integer", "got -2", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]],\"gpu_ids\":[\"x\"]},\"argv\":[\"a\"]}", INV, "field 'placement.gpu_ids[0]'", "got \"x\"", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"ntasks\":0,\"argv\":[\"a\"]}", INV, "render: field 'ntasks' must be a positive integer", "got 0", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"cpus_per_task\":\"2\",\"argv\":[\"a\"]}", INV, "render: field 'cpus_per_task'", "got \"2\"", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"memory_cap\":0,\"argv\":[\"a\"]}", INV, "render: field 'memory_cap' must be a positive integer", "got 0", "6" },
    { "{\"op\":\"render\",\"id\":6,\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"argv\":[]}", INV, "render: field 'argv' must be a non-empty array", "", "6" },
};

START_TEST (test_malformed)
{
    const struct bad_case *bc = &bad_cases[_i];
    struct proto_request r;
    berth_error_t e;
    error_clear (&e);
    ck_assert_int_eq (decode (bc->line, &r, &e), -1);
    ck_assert_str_eq (e.code, bc->code);
    if (!strstr (e.text, bc->want1) || !strstr (e.text, bc->want2))
        ck_abort_msg ("%s: message '%s' lacks '%s' / '%s'", bc->line, e.text, bc->want1,
                      bc->want2);
    char *id = id_text (&r);
    ck_assert_str_eq (id, bc->id);
    free (id);
    /* nothing but the id is left */
    ck_assert_int_eq (r.op, PROTO_STATUS);
    /* the error reply echoes the id and carries the code */
    json_t *reply = proto_error_reply (r.id, &e);
    json_t *rid;
    const char *code, *msg;
    int ok = 1;
    ck_assert_int_eq (json_unpack (reply, "{s:o s:b s:{s:s s:s}}", "id", &rid, "ok", &ok,
                                   "error", "code", &code, "message", &msg), 0);
    ck_assert (json_equal (rid, r.id ? r.id : json_null ()));
    ck_assert_int_eq (ok, 0);
    ck_assert_str_eq (code, bc->code);
    ck_assert_str_eq (msg, e.text);
    json_decref (reply);
    proto_request_free (&r);
}
END_TEST

/* Every count field refuses a string, a negative number and an absurd one. */
static const char *const count_fields[] = {
    "ntasks", "min_tasks", "cpus_per_task", "min_cpus_per_task", "cores",
    "min_cores", "gpus", "min_gpus", "gpus_per_task", "min_gpus_per_task",
    "memory", "min_memory", "priority",
};

START_TEST (test_count_fields)
{
    const char *f = count_fields[_i];
    const char *values[] = { "\"x\"", "-2000000", "2000000000000", "[1]", "true", "1.5" };
    for (size_t k = 0; k < sizeof (values) / sizeof (values[0]); k++) {
        char line[256], want[64];
        struct proto_request r;
        berth_error_t e;
        snprintf (line, sizeof (line), "{\"op\":\"acquire\",\"id\":\"q%zu\",\"%s\":%s}", k, f,
                  values[k]);
        ck_assert_int_eq (decode (line, &r, &e), -1);
        ck_assert_str_eq (e.code, PROTO_ERR_INVALID_REQUEST);
        snprintf (want, sizeof (want), "acquire: field '%s' must be", f);
        if (!strstr (e.text, want) || !strstr (e.text, values[k]))
            ck_abort_msg ("%s: %s", line, e.text);
        snprintf (want, sizeof (want), "q%zu", k);
        ck_assert_str_eq (json_string_value (r.id), want);
        proto_request_free (&r);
    }
}
END_TEST

START_TEST (test_bool_fields)
{
    const char *fields[] = { "may_span_nodes", "local", "wait", "detach", "env", "resume" };
    for (size_t i = 0; i < sizeof (fields) / sizeof (fields[0]); i++) {
        char line[128], want[96];
        struct proto_request r;
        berth_error_t e;
        snprintf (line, sizeof (line), "{\"op\":\"acquire\",\"id\":1,\"%s\":\"false\"}", fields[i]);
        ck_assert_int_eq (decode (line, &r, &e), -1);
        snprintf (want, sizeof (want), "field '%s' must be true or false, got \"false\"", fields[i]);
        ck_assert_msg (strstr (e.text, want), "%s", e.text);
        proto_request_free (&r);
    }
}
END_TEST

START_TEST (test_too_large)
{
    struct proto_request r;
    berth_error_t e;
    size_t n = PROTO_MAX_LINE + 1;
    char *line = malloc (n + 1);
    const char *head = "{\"op\":\"status\",\"id\":5}";

    /* exactly the limit, padded with blanks: accepted */
    memset (line, ' ', n);
    memcpy (line, head, strlen (head));
    line[n - 1] = '\n';
    ck_assert_int_eq (proto_decode_request (line, n - 1, &r, &e), 0);
    ck_assert_int_eq (r.op, PROTO_STATUS);
    proto_request_free (&r);
    /* one byte more: too_large, no id (the line was never parsed) */
    ck_assert_int_eq (proto_decode_request (line, n, &r, &e), -1);
    ck_assert_str_eq (e.code, PROTO_ERR_TOO_LARGE);
    ck_assert_ptr_nonnull (strstr (e.text, "request of 65537 bytes is over the limit of 65536"));
    ck_assert_ptr_null (r.id);
    proto_request_free (&r);
    free (line);
}
END_TEST

START_TEST (test_nul_bytes)
{
    struct proto_request r;
    berth_error_t e;
    const char in_string[] = "{\"op\":\"status\",\"id\":\"a\0b\"}";
    const char after[] = "{\"op\":\"status\",\"id\":1}\0garbage";

    ck_assert_int_eq (proto_decode_request (in_string, sizeof (in_string) - 1, &r, &e), -1);
    ck_assert_str_eq (e.code, PROTO_ERR_INVALID_REQUEST);
    ck_assert_msg (strstr (e.text, "not valid JSON"), "%s", e.text);
    proto_request_free (&r);
    ck_assert_int_eq (proto_decode_request (after, sizeof (after) - 1, &r, &e), -1);
    ck_assert_msg (strstr (e.text, "not valid JSON"), "%s", e.text);
    proto_request_free (&r);
}
END_TEST

START_TEST (test_deep_nesting)
{
    static char line[PROTO_MAX_LINE];
    struct proto_request r;
    berth_error_t e;
    const char *head = "{\"op\":\"status\",\"id\":1,\"x\":";
    size_t n = strlen (head), depth = 30000;   /* twice that stays under the limit */

    memcpy (line, head, n);
    memset (line + n, '[', depth);
    memset (line + n + depth, ']', depth);
    strcpy (line + n + 2 * depth, "}");
    ck_assert_int_eq (decode (line, &r, &e), -1);
    ck_assert_str_eq (e.code, PROTO_ERR_INVALID_REQUEST);
    ck_assert_msg (strstr (e.text, "maximum parsing depth"), "%s", e.text);
    proto_request_free (&r);
    /* shallow enough to parse: refused as an unknown field, id echoed */
    depth = 100;
    memset (line + n, '[', depth);
    memset (line + n + depth, ']', depth);
    strcpy (line + n + 2 * depth, "}");
    ck_assert_int_eq (decode (line, &r, &e), -1);
    ck_assert_msg (strstr (e.text, "status: unknown field(s): x"), "%s", e.text);
    ck_assert_int_eq (json_integer_value (r.id), 1);
    proto_request_free (&r);
}
END_TEST

/* ---- request round trips ----------------------------------------------- */

START_TEST (test_acquire_defaults)
{
    struct proto_request r;
    berth_error_t e;
    ck_assert_int_eq (decode ("{\"op\":\"acquire\",\"id\":1,\"label\":null,\"cores\":null}\n", &r, &e), 0);
    const struct step_request *s = &r.acquire.step;
    ck_assert_int_eq (r.op, PROTO_ACQUIRE);
    ck_assert_int_eq (s->cores, STEP_UNSET);
    ck_assert_int_eq (s->ntasks, STEP_UNSET);
    ck_assert_int_eq (s->gpus, STEP_UNSET);
    ck_assert_int_eq (s->memory, STEP_UNSET);
    ck_assert_int_eq (s->may_span_nodes, STEP_UNSET);
    ck_assert_ptr_null (s->label);
    ck_assert_ptr_null (s->argv);
    ck_assert (s->timeout < 0);
    ck_assert (r.acquire.wait);
    ck_assert (!r.acquire.detach && !r.acquire.env && !s->local);
    ck_assert (r.acquire.ttl < 0);
    ck_assert (r.acquire.duration < 0);
    ck_assert (!r.acquire.resume);
    ck_assert_int_eq (r.acquire.owner_pid, 0);
    proto_request_free (&r);
}
END_TEST

/* An acquire of common members only (decoded by the short format), and
 * the same with one rarer member (the full format): alike where they
 * agree, and every member decoded. */
START_TEST (test_acquire_common_members)
{
    const char *common = "{\"op\":\"acquire\",\"id\":5,\"ntasks\":4,\"cpus_per_task\":2,"
                         "\"gpus\":1,\"memory\":900,\"label\":\"x\",\"argv\":[\"a\",\"b\"],"
                         "\"local\":true,\"env\":true%s}";
    const char *extra[] = { "", ",\"priority\":7", ",\"wait\":false", ",\"min_cores\":2" };
    for (int k = 0; k < 4; k++) {
        char line[512];
        struct proto_request r;
        berth_error_t e;
        snprintf (line, sizeof (line), common, extra[k]);
        ck_assert_msg (decode (line, &r, &e) == 0, "%s: %s", line, e.text);
        const struct step_request *s = &r.acquire.step;
        ck_assert_int_eq (s->ntasks, 4);
        ck_assert_int_eq (s->cpus_per_task, 2);
        ck_assert_int_eq (s->gpus, 1);
        ck_assert_int_eq (s->memory, 900);
        ck_assert_str_eq (s->label, "x");
        ck_assert_str_eq (s->argv[1], "b");
        ck_assert (s->local && r.acquire.env);
        ck_assert_int_eq (s->priority, k == 1 ? 7 : 0);
        ck_assert (r.acquire.wait == (k != 2));
        ck_assert_int_eq (s->min_cores, k == 3 ? 2 : STEP_UNSET);
        ck_assert_int_eq (s->cores, STEP_UNSET);
        proto_request_free (&r);
    }
}
END_TEST

START_TEST (test_roundtrip_acquire)
{
    struct proto_request in, out;
    char *argv[] = { "./model", "--case", "a b", "", NULL };
    proto_request_init (&in, PROTO_ACQUIRE);
    in.id = json_string ("req-1");
    struct step_request *s = &in.acquire.step;
    s->ntasks = 16; s->min_tasks = 8; s->cpus_per_task = 2; s->min_cpus_per_task = 1;
    s->cores = 32; s->min_cores = 16; s->gpus = 4; s->min_gpus = 0;
    s->gpus_per_task = 1; s->min_gpus_per_task = 0;
    s->memory = (int64_t) 1 << 39; s->min_memory = 4000;
    s->may_span_nodes = 0; s->local = true; s->label = strdup ("ocean_qu240");
    s->priority = -5; s->timeout = 2.5; s->argv = argv;
    in.acquire.wait = false; in.acquire.detach = true; in.acquire.ttl = 3600;
    in.acquire.owner_pid = 4242; in.acquire.env = true; in.acquire.duration = 5400.5;
    in.acquire.resume = true;

    roundtrip (&in, &out);
    const struct step_request *o = &out.acquire.step;
    ck_assert_int_eq (o->ntasks, 16); ck_assert_int_eq (o->min_tasks, 8);
    ck_assert_int_eq (o->cpus_per_task, 2); ck_assert_int_eq (o->min_cpus_per_task, 1);
    ck_assert_int_eq (o->cores, 32); ck_assert_int_eq (o->min_cores, 16);
    ck_assert_int_eq (o->gpus, 4); ck_assert_int_eq (o->min_gpus, 0);
    ck_assert_int_eq (o->gpus_per_task, 1); ck_assert_int_eq (o->min_gpus_per_task, 0);
    ck_assert (o->memory == (int64_t) 1 << 39);
    ck_assert_int_eq (o->min_memory, 4000);
    ck_assert_int_eq (o->may_span_nodes, 0);
    ck_assert (o->local);
    ck_assert_str_eq (o->label, "ocean_qu240");
    ck_assert_int_eq (o->priority, -5);
    ck_assert_double_eq (o->timeout, 2.5);
    for (int i = 0; i < 4; i++)
        ck_assert_str_eq (o->argv[i], argv[i]);
    ck_assert_ptr_null (o->argv[4]);
    ck_assert (!out.acquire.wait && out.acquire.detach && out.acquire.env);
    ck_assert_double_eq (out.acquire.ttl, 3600);
    ck_assert_double_eq (out.acquire.duration, 5400.5);
    ck_assert_int_eq (out.acquire.owner_pid, 4242);
    ck_assert (out.acquire.resume);
    proto_request_free (&out);

    /* defaults survive the trip too */
    s->argv = NULL;
    proto_request_free (&in);
    proto_request_init (&in, PROTO_ACQUIRE);
    in.id = json_integer (3);
    in.acquire.step.may_span_nodes = 1;
    roundtrip (&in, &out);
    ck_assert_int_eq (out.acquire.step.cores, STEP_UNSET);
    ck_assert_int_eq (out.acquire.step.may_span_nodes, 1);
    ck_assert (out.acquire.wait);
    ck_assert (out.acquire.step.timeout < 0);
    ck_assert (out.acquire.duration < 0);
    proto_request_free (&out);
    proto_request_free (&in);
}
END_TEST

static void fill_placement (struct placement *p)
{
    static const int cores0[] = { 0, 1, 2, 3 }, cores1[] = { 8, 9, 10, 11 };
    p->nnodes = 2;
    p->nodes = calloc (2, sizeof (*p->nodes));
    p->nodes[0].name = strdup ("nid001234");
    p->nodes[1].name = strdup ("nid001235");
    for (int i = 0; i < 2; i++) {
        p->nodes[i].ncores = 4;
        p->nodes[i].cores = malloc (4 * sizeof (int));
        memcpy (p->nodes[i].cores, i ? cores1 : cores0, 4 * sizeof (int));
    }
    p->gpus = 2;
    p->ngpu_ids = 2;
    p->gpu_ids = malloc (2 * sizeof (int));
    p->gpu_ids[0] = 3;
    p->gpu_ids[1] = 1;
}

static void check_placement (const struct placement *p)
{
    ck_assert_int_eq (p->nnodes, 2);
    ck_assert_str_eq (p->nodes[0].name, "nid001234");
    ck_assert_str_eq (p->nodes[1].name, "nid001235");
    ck_assert_int_eq (p->nodes[1].ncores, 4);
    ck_assert_int_eq (p->nodes[1].cores[0], 8);
    ck_assert_int_eq (p->nodes[1].cores[3], 11);
    ck_assert_int_eq (p->gpus, 2);
    ck_assert_int_eq (p->ngpu_ids, 2);
    ck_assert_int_eq (p->gpu_ids[0], 3);
    ck_assert_int_eq (p->gpu_ids[1], 1);
}

START_TEST (test_roundtrip_render)
{
    struct proto_request in, out;
    char *argv[] = { "./a.out", NULL };
    proto_request_init (&in, PROTO_RENDER);
    in.id = json_integer (-7);
    fill_placement (&in.render.placement);
    in.render.ntasks = 8;
    in.render.cpus_per_task = 1;
    in.render.memory_cap = 8000;
    in.render.argv = argv;
    roundtrip (&in, &out);
    check_placement (&out.render.placement);
    ck_assert_int_eq (out.render.ntasks, 8);
    ck_assert_int_eq (out.render.cpus_per_task, 1);
    ck_assert_int_eq (out.render.memory_cap, 8000);
    ck_assert_str_eq (out.render.argv[0], "./a.out");
    ck_assert_ptr_null (out.render.argv[1]);
    proto_request_free (&out);
    in.render.argv = NULL;
    proto_request_free (&in);

    /* defaults: one task, no cpus_per_task, no cap; gpus from gpu_ids */
    struct proto_request r;
    berth_error_t e;
    ck_assert_int_eq (decode ("{\"op\":\"render\",\"id\":1,\"argv\":[\"x\"],\"placement\":"
                              "{\"nodes\":[\"n\"],\"cores\":[[]],\"gpu_ids\":[0,1]}}", &r, &e), 0);
    ck_assert_int_eq (r.render.ntasks, 1);
    ck_assert_int_eq (r.render.cpus_per_task, 0);
    ck_assert (r.render.memory_cap < 0);
    ck_assert_int_eq (r.render.placement.gpus, 2);
    ck_assert_int_eq (r.render.placement.nodes[0].ncores, 0);
    proto_request_free (&r);

    /* no node names (left out or []): one node, the launcher's; out again
     * as "nodes": [] */
    const char *unnamed[] = {
        "{\"op\":\"render\",\"id\":1,\"argv\":[\"x\"],\"placement\":{\"cores\":[[2,3]]}}",
        "{\"op\":\"render\",\"id\":1,\"argv\":[\"x\"],\"placement\":{\"nodes\":[],"
        "\"cores\":[[2,3]]}}",
    };
    for (int i = 0; i < 2; i++) {
        ck_assert_msg (decode (unnamed[i], &r, &e) == 0, "%s", e.text);
        ck_assert_int_eq (r.render.placement.nnodes, 1);
        ck_assert_ptr_null (r.render.placement.nodes[0].name);
        ck_assert_int_eq (r.render.placement.nodes[0].ncores, 2);
        ck_assert_int_eq (placement_validate (&r.render.placement, &e), 0);
        roundtrip (&r, &out);
        ck_assert_int_eq (out.render.placement.nnodes, 1);
        ck_assert_ptr_null (out.render.placement.nodes[0].name);
        ck_assert_int_eq (out.render.placement.nodes[0].cores[1], 3);
        proto_request_free (&out);
        proto_request_free (&r);
    }

    /* GPU ids per node, gpus their sum unless given */
    ck_assert_int_eq (decode ("{\"op\":\"render\",\"id\":1,\"argv\":[\"x\"],\"placement\":"
                              "{\"nodes\":[\"a\",\"b\"],\"cores\":[[0],[0]],"
                              "\"gpu_ids\":[[0,1],[2]]}}", &r, &e), 0);
    struct placement *pl = &r.render.placement;
    ck_assert (pl->node_gpu_ids);
    ck_assert_int_eq (pl->gpus, 3);
    ck_assert_ptr_null (pl->gpu_ids);
    ck_assert_int_eq (pl->nodes[0].ngpu_ids, 2);
    ck_assert_int_eq (pl->nodes[1].gpu_ids[0], 2);
    ck_assert_int_eq (placement_validate (pl, &e), 0);
    ck_assert (!placement_gpu_ids_uniform (pl));
    roundtrip (&r, &out);
    ck_assert (out.render.placement.node_gpu_ids);
    ck_assert_int_eq (out.render.placement.nodes[1].ngpu_ids, 1);
    ck_assert_int_eq (out.render.placement.nodes[1].gpu_ids[0], 2);
    ck_assert_int_eq (out.render.placement.gpus, 3);
    proto_request_free (&out);
    proto_request_free (&r);
}
END_TEST

START_TEST (test_roundtrip_small_ops)
{
    struct proto_request in, out;

    proto_request_init (&in, PROTO_HELLO);
    in.id = json_integer (1);
    in.hello.version = 1;
    roundtrip (&in, &out);
    ck_assert_int_eq (out.hello.version, 1);
    proto_request_free (&out);
    proto_request_free (&in);

    proto_request_init (&in, PROTO_HELLO);   /* no version: served at the current one */
    in.id = json_integer (1);
    roundtrip (&in, &out);
    ck_assert_int_eq (out.hello.version, 0);
    ck_assert (!out.hello.pipeline);
    proto_request_free (&out);
    proto_request_free (&in);

    proto_request_init (&in, PROTO_HELLO);   /* asks to pipeline acquires */
    in.id = json_integer (1);
    in.hello.pipeline = true;
    roundtrip (&in, &out);
    ck_assert (out.hello.pipeline);
    proto_request_free (&out);
    proto_request_free (&in);

    proto_request_init (&in, PROTO_RELEASE);
    in.id = json_integer (2);
    in.release.lease = strdup ("L17");
    roundtrip (&in, &out);
    ck_assert_str_eq (out.release.lease, "L17");
    proto_request_free (&out);
    proto_request_free (&in);

    proto_request_init (&in, PROTO_RESOURCES);
    in.id = json_integer (3);
    roundtrip (&in, &out);
    ck_assert_ptr_null (out.resources.lease);
    proto_request_free (&out);
    in.resources.lease = strdup ("L2");
    roundtrip (&in, &out);
    ck_assert_str_eq (out.resources.lease, "L2");
    proto_request_free (&out);
    proto_request_free (&in);

    proto_request_init (&in, PROTO_STATUS);
    in.id = json_string ("");
    roundtrip (&in, &out);
    ck_assert (!out.status.queue_only && !out.status.time_left);
    proto_request_free (&out);
    in.status.queue_only = true;
    roundtrip (&in, &out);
    ck_assert (out.status.queue_only && !out.status.time_left);
    proto_request_free (&out);
    in.status.queue_only = false;
    in.status.pid = 4242;
    roundtrip (&in, &out);
    ck_assert (!out.status.queue_only && out.status.pid == 4242);
    proto_request_free (&out);
    in.status.pid = 0;
    in.status.brief = PROTO_STATUS_BRIEF_MAX;
    roundtrip (&in, &out);
    ck_assert_int_eq (out.status.brief, PROTO_STATUS_BRIEF_MAX);
    ck_assert (!out.status.queue_only && !out.status.pid);
    proto_request_free (&out);
    proto_request_free (&in);

    proto_request_init (&in, PROTO_WATCH);
    in.id = json_integer (5);
    in.watch.history = true;
    roundtrip (&in, &out);
    ck_assert (out.watch.history);
    proto_request_free (&out);
    proto_request_free (&in);

    proto_request_init (&in, PROTO_SHUTDOWN);
    in.id = json_integer (6);
    roundtrip (&in, &out);
    ck_assert_int_eq (out.shutdown.mode, PROTO_SHUTDOWN_DRAIN);
    proto_request_free (&out);
    in.shutdown.mode = PROTO_SHUTDOWN_FORCE;
    roundtrip (&in, &out);
    ck_assert_int_eq (out.shutdown.mode, PROTO_SHUTDOWN_FORCE);
    proto_request_free (&out);
    proto_request_free (&in);
}
END_TEST

START_TEST (test_encode_request_refuses)
{
    struct proto_request r;
    proto_request_init (&r, PROTO_RELEASE);           /* no lease */
    ck_assert_ptr_null (proto_encode_request (&r));
    proto_request_init (&r, PROTO_RENDER);            /* no argv */
    ck_assert_ptr_null (proto_encode_request (&r));
    proto_request_init (&r, PROTO_STATUS);
    r.op = (enum proto_op) 99;
    ck_assert_ptr_null (proto_encode_request (&r));
    ck_assert_str_eq (proto_op_name ((enum proto_op) 99), "unknown");
    ck_assert_str_eq (proto_op_name (PROTO_RENDER), "render");
    /* no id: sent as null, which the daemon refuses */
    proto_request_init (&r, PROTO_STATUS);
    json_t *o = proto_encode_request (&r);
    ck_assert (json_is_null (json_object_get (o, "id")));
    json_decref (o);
}
END_TEST

/* ---- replies ----------------------------------------------------------- */

static json_t *reparse (json_t *msg)
{
    json_t *back;
    berth_error_t e;
    ck_assert_ptr_nonnull (msg);
    char *line = proto_line (msg);
    ck_assert_ptr_nonnull (line);
    ck_assert_int_eq (proto_parse_message (line, strlen (line), &back, &e), 0);
    free (line);
    json_decref (msg);
    return back;
}

START_TEST (test_hello_reply)
{
    json_t *id = json_integer (1);
    json_t *p = reparse (proto_hello_reply (id, 1, 1024));
    ck_assert_int_eq (json_integer_value (json_object_get (json_object_get (p, "pipeline"),
                                                           "max_waiting")), 1024);
    json_decref (p);
    json_t *m = reparse (proto_hello_reply (id, 1, 0));
    ck_assert_ptr_null (json_object_get (m, "pipeline"));
    berth_error_t e;
    int v = 0;
    ck_assert_int_eq (proto_reply_status (m, &e), 0);
    ck_assert_int_eq (proto_decode_hello_reply (m, &v, &e), 0);
    ck_assert_int_eq (v, 1);
    ck_assert (json_equal (json_object_get (m, "id"), id));
    ck_assert_int_eq (json_integer_value (json_array_get (json_object_get (m, "versions"), 0)),
                      PROTO_VERSION);
    ck_assert_str_eq (json_string_value (json_object_get (m, "server")), "berthd " BERTH_VERSION);
    ck_assert (!proto_is_event (m));
    json_object_del (m, "version");
    ck_assert_int_eq (proto_decode_hello_reply (m, &v, &e), -1);
    ck_assert_str_eq (e.code, PROTO_ERR_INTERNAL);
    ck_assert_msg (strstr (e.text, "hello reply: missing required field 'version'"), "%s", e.text);
    json_object_set_new (m, "version", json_string ("1"));
    ck_assert_int_eq (proto_decode_hello_reply (m, &v, &e), -1);
    ck_assert_msg (strstr (e.text, "field 'version'"), "%s", e.text);
    json_decref (m);
    json_decref (id);
}
END_TEST

static void fill_lease (struct proto_lease *l)
{
    proto_lease_init (l);
    l->id = strdup ("L17");
    l->label = strdup ("ocean");
    fill_placement (&l->placement);
    l->memory_cap = 8000;
    l->budget_mb = 16000;
    l->launch.argc = 3;
    l->launch.argv = calloc (4, sizeof (char *));
    l->launch.argv[0] = strdup ("srun");
    l->launch.argv[1] = strdup ("-n8");
    l->launch.argv[2] = strdup ("./model\nx");
    l->launch.n_unset = 1;
    l->launch.env_unset = calloc (2, sizeof (char *));
    l->launch.env_unset[0] = strdup ("SLURM_CPU_BIND");
    l->launch.n_set = 1;
    l->launch.env_set = calloc (1, sizeof (struct env_set_item));
    l->launch.env_set[0].name = strdup ("OMP_NUM_THREADS");
    l->launch.env_set[0].value = strdup ("2");
    l->nenv = 2;
    l->env = calloc (2, sizeof (struct env_set_item));
    l->env[0].name = strdup ("BERTH_LEASE");
    l->env[0].value = strdup ("L17");
    l->env[1].name = strdup ("BERTH_CORES");
    l->env[1].value = strdup ("0-3");
    l->owner_pid = 99;
    l->granted = 1700000000.5;
}

static void check_lease (const struct proto_lease *l)
{
    ck_assert_str_eq (l->id, "L17");
    ck_assert_str_eq (l->label, "ocean");
    check_placement (&l->placement);
    ck_assert_int_eq (l->memory_cap, 8000);
    ck_assert_int_eq (l->budget_mb, 16000);
    ck_assert_int_eq (l->launch.argc, 3);
    ck_assert_str_eq (l->launch.argv[2], "./model\nx");
    ck_assert_ptr_null (l->launch.argv[3]);
    ck_assert_int_eq (l->launch.n_unset, 1);
    ck_assert_str_eq (l->launch.env_unset[0], "SLURM_CPU_BIND");
    ck_assert_int_eq (l->launch.n_set, 1);
    ck_assert_str_eq (l->launch.env_set[0].name, "OMP_NUM_THREADS");
    ck_assert_str_eq (l->launch.env_set[0].value, "2");
    ck_assert_int_eq (l->nenv, 2);
    ck_assert_str_eq (l->env[1].name, "BERTH_CORES");
    ck_assert_str_eq (l->env[1].value, "0-3");
    ck_assert_int_eq (l->owner_pid, 99);
    ck_assert_double_eq (l->granted, 1700000000.5);
}

START_TEST (test_acquire_reply)
{
    struct proto_lease in, out;
    berth_error_t e;
    json_t *id = json_string ("x");
    fill_lease (&in);
    json_t *m = reparse (proto_acquire_reply (id, &in));
    ck_assert_int_eq (proto_reply_status (m, &e), 0);
    ck_assert (json_equal (json_object_get (m, "id"), id));
    ck_assert_int_eq (proto_decode_lease (m, &out, &e), 0);
    check_lease (&out);
    proto_lease_free (&out);
    json_decref (m);

    /* no cap, no budget, no argv, no env, zero GPUs stated as [] */
    proto_lease_free (&in);
    proto_lease_init (&in);
    in.id = strdup ("L1");
    fill_placement (&in.placement);
    in.placement.gpus = 0;
    in.placement.ngpu_ids = 0;
    m = reparse (proto_acquire_reply (id, &in));
    json_t *p = json_object_get (m, "placement");
    ck_assert (json_is_array (json_object_get (p, "gpu_ids")));
    ck_assert_int_eq (json_array_size (json_object_get (p, "gpu_ids")), 0);
    ck_assert (json_is_null (json_object_get (m, "memory_cap")));
    ck_assert (json_is_null (json_object_get (m, "budget_mb")));
    ck_assert (json_is_null (json_object_get (m, "label")));
    ck_assert_ptr_null (json_object_get (m, "argv"));
    ck_assert_ptr_null (json_object_get (m, "env"));
    ck_assert_int_eq (proto_decode_lease (m, &out, &e), 0);
    ck_assert (out.memory_cap < 0 && out.budget_mb < 0 && out.granted < 0);
    ck_assert_ptr_null (out.launch.argv);
    ck_assert_ptr_null (out.label);
    ck_assert_ptr_null (out.env);
    ck_assert_int_eq (out.placement.gpus, 0);
    proto_lease_free (&out);
    json_decref (m);

    /* GPUs whose indices are unknown: gpu_ids null */
    in.placement.gpus = 2;
    m = reparse (proto_acquire_reply (NULL, &in));
    ck_assert (json_is_null (json_object_get (m, "id")));
    ck_assert (json_is_null (json_object_get (json_object_get (m, "placement"), "gpu_ids")));
    ck_assert_int_eq (proto_decode_lease (m, &out, &e), 0);
    ck_assert_int_eq (out.placement.gpus, 2);
    ck_assert_int_eq (out.placement.ngpu_ids, 0);
    proto_lease_free (&out);
    json_decref (m);
    proto_lease_free (&in);
    json_decref (id);
}
END_TEST

START_TEST (test_lease_encode_refuses)
{
    struct proto_lease l;
    proto_lease_init (&l);
    fill_placement (&l.placement);
    ck_assert_ptr_null (proto_acquire_reply (NULL, &l));     /* no lease id */
    l.id = strdup ("L1");
    free (l.placement.nodes[1].name);
    l.placement.nodes[1].name = NULL;                        /* broken placement */
    ck_assert_ptr_null (proto_lease_json (&l));
    proto_lease_free (&l);
    proto_lease_init (&l);
    l.id = strdup ("L1");                                    /* no nodes at all */
    ck_assert_ptr_null (proto_lease_json (&l));
    proto_lease_free (&l);
    ck_assert_ptr_null (proto_release_reply (NULL, NULL));
    struct launch none = { 0 };
    ck_assert_ptr_null (proto_render_reply (NULL, &none));
    ck_assert_ptr_null (proto_event_released (1, NULL, NULL, NULL));
    ck_assert_ptr_null (proto_line (NULL));
}
END_TEST

START_TEST (test_lease_decode_errors)
{
    const struct { const char *json, *want; } cases[] = {
        { "{\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]}}", "lease: missing required field 'lease'" },
        { "{\"lease\":\"L1\"}", "lease: missing required field 'placement'" },
        { "{\"lease\":null,\"placement\":{}}", "field 'lease' must be a lease id" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[-1]]}}", "field 'placement.cores[0][0]'" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"argv\":[1]}", "field 'argv[0]'" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"env_delta\":{\"set\":{\"A\":1}}}", "field 'env_delta.set.A' must be a string" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"env_delta\":{\"unset\":\"A\"}}", "field 'env_delta.unset' must be an array" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"env_delta\":{\"unset\":[\"A\",null]}}", "field 'env_delta.unset[1]' must be a name" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"env_delta\":[]}", "lease: must be a JSON object" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"env\":[]}", "field 'env' must be an object of strings" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"memory_cap\":\"8G\"}", "field 'memory_cap'" },
        { "{\"lease\":\"L1\",\"placement\":{\"nodes\":[\"a\"],\"cores\":[[0]]},\"granted\":-1}", "field 'granted'" },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        json_t *m = json_loads (cases[i].json, 0, NULL);
        struct proto_lease l;
        berth_error_t e;
        ck_assert_ptr_nonnull (m);
        l.id = (char *) "untouched";
        ck_assert_int_eq (proto_decode_lease (m, &l, &e), -1);
        ck_assert_str_eq (e.code, PROTO_ERR_INTERNAL);
        ck_assert_msg (strstr (e.text, cases[i].want), "%s: %s", cases[i].json, e.text);
        ck_assert_str_eq (l.id, "untouched");
        json_decref (m);
    }
}
END_TEST

START_TEST (test_other_replies)
{
    berth_error_t e;
    json_t *id = json_integer (9);
    json_t *m = reparse (proto_release_reply (id, "L17"));
    ck_assert_int_eq (proto_reply_status (m, &e), 0);
    ck_assert_str_eq (json_string_value (json_object_get (m, "lease")), "L17");
    json_decref (m);

    /* render reply */
    char *argv[] = { "mpiexec", "-n", "4", "./a.out", NULL };
    char *unset[] = { "X", NULL };
    struct env_set_item set[] = { { "CUDA_VISIBLE_DEVICES", "0,1" } };
    struct launch l = { .argv = argv, .argc = 4, .env_unset = unset, .n_unset = 1,
                        .env_set = set, .n_set = 1 }, back;
    m = reparse (proto_render_reply (id, &l));
    ck_assert_int_eq (proto_decode_render_reply (m, &back, &e), 0);
    ck_assert_int_eq (back.argc, 4);
    ck_assert_str_eq (back.argv[3], "./a.out");
    ck_assert_str_eq (back.env_unset[0], "X");
    ck_assert_str_eq (back.env_set[0].value, "0,1");
    free (back.argv[0]); free (back.argv[1]); free (back.argv[2]); free (back.argv[3]);
    free (back.argv);
    free (back.env_unset[0]); free (back.env_unset);
    free (back.env_set[0].name); free (back.env_set[0].value); free (back.env_set);
    json_object_del (m, "argv");
    ck_assert_int_eq (proto_decode_render_reply (m, &back, &e), -1);
    ck_assert_msg (strstr (e.text, "render reply: field 'argv' must be a non-empty array"), "%s", e.text);
    json_decref (m);

    /* ok reply: body members merged, id and ok not overridden */
    json_t *body = json_pack ("{s:i s:b s:s}", "id", 5, "ok", 0, "watching", "yes");
    m = reparse (proto_ok_reply (id, body));
    ck_assert_int_eq (json_integer_value (json_object_get (m, "id")), 9);
    ck_assert_int_eq (proto_reply_status (m, &e), 0);
    ck_assert_str_eq (json_string_value (json_object_get (m, "watching")), "yes");
    json_decref (m);
    json_decref (body);
    m = reparse (proto_ok_reply (NULL, NULL));
    ck_assert (json_is_null (json_object_get (m, "id")));
    ck_assert_int_eq (json_object_size (m), 2);
    json_decref (m);

    /* status shell */
    m = reparse (proto_status_reply (id, json_pack ("{s:i}", "nodes", 4), NULL, NULL));
    ck_assert_int_eq (proto_reply_status (m, &e), 0);
    ck_assert_int_eq (json_integer_value (json_object_get (json_object_get (m, "allocation"), "nodes")), 4);
    ck_assert (json_is_array (json_object_get (m, "leases")));
    ck_assert (json_is_array (json_object_get (m, "queue")));
    ck_assert_int_eq (json_integer_value (json_object_get (m, "version")), PROTO_VERSION);
    json_decref (m);
    json_decref (id);
}
END_TEST

START_TEST (test_error_replies)
{
    berth_error_t in, out;
    errprintf_code (&in, PROTO_ERR_UNSATISFIABLE, "needs 256 cores; the allocation has 192");
    json_t *id = json_integer (4);
    json_t *m = reparse (proto_error_reply (id, &in));
    json_decref (id);
    ck_assert_int_eq (proto_reply_status (m, &out), -1);
    ck_assert_str_eq (out.code, PROTO_ERR_UNSATISFIABLE);
    ck_assert_str_eq (out.text, in.text);
    json_decref (m);

    /* every stable code survives the trip as its constant */
    const char *codes[] = { PROTO_ERR_INVALID_REQUEST, PROTO_ERR_UNSATISFIABLE, PROTO_ERR_TIMEOUT,
                            PROTO_ERR_NOT_FOUND, PROTO_ERR_FORBIDDEN, PROTO_ERR_TOO_LARGE,
                            PROTO_ERR_SHUTTING_DOWN, PROTO_ERR_UNSUPPORTED_VERSION,
                            PROTO_ERR_BUSY, PROTO_ERR_INTERNAL };
    for (size_t i = 0; i < sizeof (codes) / sizeof (codes[0]); i++) {
        char buf[32];
        snprintf (buf, sizeof (buf), "%s", codes[i]);
        ck_assert_str_eq (proto_error_code (buf), codes[i]);
        errprintf_code (&in, codes[i], "m%zu", i);
        m = reparse (proto_error_reply (NULL, &in));
        ck_assert_int_eq (proto_reply_status (m, &out), -1);
        ck_assert_str_eq (out.code, codes[i]);
        json_decref (m);
    }
    ck_assert_ptr_null (proto_error_code ("nope"));
    ck_assert_ptr_null (proto_error_code (NULL));

    /* a code this client does not know */
    m = json_pack ("{s:i s:b s:{s:s s:s}}", "id", 1, "ok", 0, "error", "code", "quota",
                   "message", "too many");
    ck_assert_int_eq (proto_reply_status (m, &out), -1);
    ck_assert_str_eq (out.code, "error");
    ck_assert_str_eq (out.text, "too many (quota)");
    json_decref (m);

    /* an empty message (found by fuzz_codec): the reason still says something */
    m = json_pack ("{s:i s:b s:{s:s s:s}}", "id", 2, "ok", 0, "error", "code",
                   "invalid_request", "message", "");
    ck_assert_int_eq (proto_reply_status (m, &out), -1);
    ck_assert_str_eq (out.code, PROTO_ERR_INVALID_REQUEST);
    ck_assert_str_eq (out.text, "berthd refused the request (invalid_request) "
                      "without saying why");
    json_decref (m);

    /* no err: internal */
    m = reparse (proto_error_reply (NULL, NULL));
    ck_assert_int_eq (proto_reply_status (m, &out), -1);
    ck_assert_str_eq (out.code, PROTO_ERR_INTERNAL);
    json_decref (m);

    /* malformed replies */
    const char *bad[] = { "{\"id\":1}", "{\"id\":1,\"ok\":\"yes\"}", "{\"id\":1,\"ok\":false}",
                          "{\"id\":1,\"ok\":false,\"error\":{\"code\":1,\"message\":\"m\"}}" };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        m = json_loads (bad[i], 0, NULL);
        ck_assert_int_eq (proto_reply_status (m, &out), -1);
        ck_assert_str_eq (out.code, PROTO_ERR_INTERNAL);
        ck_assert_msg (strstr (out.text, "berthd sent"), "%s", out.text);
        json_decref (m);
    }
}
END_TEST

START_TEST (test_parse_message_errors)
{
    json_t *m = NULL;
    berth_error_t e;
    ck_assert_int_eq (proto_parse_message ("{x", 2, &m, &e), -1);
    ck_assert_str_eq (e.code, PROTO_ERR_INTERNAL);
    ck_assert_msg (strstr (e.text, "not JSON"), "%s", e.text);
    ck_assert_int_eq (proto_parse_message ("[]", 2, &m, &e), -1);
    ck_assert_msg (strstr (e.text, "not an object"), "%s", e.text);
    ck_assert_int_eq (proto_parse_message ("{}", (size_t) PROTO_MAX_REPLY + 1, &m, &e), -1);
    ck_assert_str_eq (e.code, PROTO_ERR_TOO_LARGE);
    ck_assert_ptr_null (m);
}
END_TEST

/* ---- events ------------------------------------------------------------ */

START_TEST (test_events)
{
    struct proto_lease l;
    struct proto_event ev;
    berth_error_t e, why;

    fill_lease (&l);
    /* berthd writes this event by hand (leases.c): the lease's fields after
     * the event's own */
    json_t *m = proto_lease_json (&l);
    ck_assert_ptr_nonnull (m);
    ck_assert_int_eq (json_object_set_new (m, "event", json_string ("granted")), 0);
    ck_assert_int_eq (json_object_set_new (m, "time", json_real (12.5)), 0);
    m = reparse (m);
    ck_assert (proto_is_event (m));
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_int_eq (ev.kind, PROTO_EV_GRANTED);
    ck_assert_double_eq (ev.time, 12.5);
    check_lease (&ev.lease);
    proto_event_free (&ev);
    json_decref (m);
    proto_lease_free (&l);

    m = reparse (proto_event_waited (13, "mesh", 2, "no 2 nodes with 128 free cores"));
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_int_eq (ev.kind, PROTO_EV_WAITED);
    ck_assert_str_eq (ev.label, "mesh");
    ck_assert_int_eq (ev.position, 2);
    ck_assert_str_eq (ev.why, "no 2 nodes with 128 free cores");
    proto_event_free (&ev);
    json_decref (m);

    m = reparse (proto_event_waited (13, NULL, 1, NULL));
    ck_assert (json_is_null (json_object_get (m, "label")));
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_ptr_null (ev.label);
    proto_event_free (&ev);
    json_decref (m);

    m = reparse (proto_event_released (14, "L17", "ocean", "disconnected"));
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_int_eq (ev.kind, PROTO_EV_RELEASED);
    ck_assert_str_eq (ev.lease.id, "L17");
    ck_assert_str_eq (ev.lease.label, "ocean");
    ck_assert_str_eq (ev.why, "disconnected");
    proto_event_free (&ev);
    json_decref (m);

    errprintf_code (&why, PROTO_ERR_UNSATISFIABLE, "needs 300 cores; the allocation has 256");
    m = reparse (proto_event_refused (15, "big", &why));
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_int_eq (ev.kind, PROTO_EV_REFUSED);
    ck_assert_str_eq (ev.label, "big");
    ck_assert_str_eq (ev.error.code, PROTO_ERR_UNSATISFIABLE);
    ck_assert_str_eq (ev.error.text, why.text);
    proto_event_free (&ev);
    json_decref (m);

    /* berthd's start: the allocation it serves */
    m = reparse (proto_event_allocation (16, "4242", "pm-cpu", json_pack (
        "[{s:s s:s s:i s:i}]", "name", "nid1", "cores", "0-127", "ncores", 128, "gpus", 4)));
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_int_eq (ev.kind, PROTO_EV_ALLOCATION);
    ck_assert_str_eq (ev.job_id, "4242");
    ck_assert_str_eq (ev.machine, "pm-cpu");
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (ev.nodes, 0), "cores")),
                      "0-127");
    proto_event_free (&ev);
    json_decref (m);
    ck_assert_ptr_null (proto_event_allocation (1, NULL, NULL, NULL));

    const struct { const char *json, *want; } bad[] = {
        { "{\"time\":1}", "event: missing required field 'event'" },
        { "{\"event\":\"exploded\",\"time\":1}", "field 'event' must be granted, waited, released, refused or allocation" },
        { "{\"event\":\"allocation\",\"time\":1}", "field 'nodes' must be a non-empty array of nodes, got null" },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[]}", "field 'nodes' must be a non-empty array" },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[7]}", "field 'nodes[0]' must be an object, got 7" },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[{\"cores\":\"0-3\"}]}", "field 'nodes[0].name' must be a node name" },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[{\"name\":\"a\",\"cores\":\"0-3\"},{\"name\":\"b\",\"cores\":3}]}", "field 'nodes[1].cores' must be a core id set" },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[{\"name\":\"a\",\"cores\":\"0\",\"gpus\":-1}]}", "field 'nodes[0].gpus'" },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[{\"names\":\"n[1-3]\",\"count\":2,\"cores\":\"0\"}]}",
          "field 'nodes[0].count' is 2, but names 'n[1-3]' are 3" },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[{\"names\":\"n[3-1]\",\"count\":3,\"cores\":\"0\"}]}",
          "field 'nodes[0].names': " },
        { "{\"event\":\"allocation\",\"time\":1,\"nodes\":[{\"names\":7,\"count\":1,\"cores\":\"0\"}]}",
          "field 'nodes[0].names' must be a host list" },
        { "{\"event\":\"allocation\",\"time\":1,\"job_id\":5,\"nodes\":[{\"name\":\"a\",\"cores\":\"0\"}]}", "field 'job_id'" },
        { "{\"event\":\"waited\",\"time\":\"now\"}", "field 'time' must be a number" },
        { "{\"event\":\"waited\",\"time\":1,\"position\":-1}", "field 'position'" },
        { "{\"event\":\"released\",\"time\":1}", "field 'lease' must be a lease id" },
        { "{\"event\":\"refused\",\"time\":1,\"label\":\"x\"}", "event: missing required field 'error'" },
        { "{\"event\":\"granted\",\"time\":1,\"lease\":\"L1\"}", "lease: missing required field 'placement'" },
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        m = json_loads (bad[i].json, 0, NULL);
        ck_assert_int_eq (proto_decode_event (m, &ev, &e), -1);
        ck_assert_msg (strstr (e.text, bad[i].want), "%s: %s", bad[i].json, e.text);
        json_decref (m);
    }
}
END_TEST

START_TEST (test_line_framing)
{
    json_t *m = json_pack ("{s:s}", "a", "x\ny\r\n");
    char *line = proto_line (m);
    ck_assert_str_eq (line, "{\"a\":\"x\\ny\\r\\n\"}\n");
    free (line);
    json_decref (m);
}
END_TEST

/* The op table (PROTO_OPS): each op has its own name, and the strict
 * decoder reaches that op's own decoder, whose refusal is worded in the
 * op's name; the list of known ops is the table's, in order. */
START_TEST (test_op_table)
{
    char ops[256] = "";
    for (int k = 0; k < PROTO_NOPS; k++) {
        const char *name = proto_op_name ((enum proto_op) k);
        char line[128], want[64];
        struct proto_request r;
        berth_error_t err;
        ck_assert_str_ne (name, "unknown");
        for (int j = 0; j < k; j++)
            ck_assert_str_ne (name, proto_op_name ((enum proto_op) j));
        snprintf (line, sizeof (line), "{\"op\":\"%s\",\"id\":1,\"zz\":1}", name);
        ck_assert_int_eq (proto_decode_request (line, strlen (line), &r, &err), -1);
        /* refused by that op's decoder: an unknown member, or one it requires */
        snprintf (want, sizeof (want), "%s: ", name);
        ck_assert_str_eq (err.code, PROTO_ERR_INVALID_REQUEST);
        ck_assert_msg (!strncmp (err.text, want, strlen (want))
                       && (strstr (err.text, "unknown field(s): zz")
                           || strstr (err.text, "missing required field")),
                       "%s: %s", name, err.text);
        proto_request_free (&r);
        snprintf (ops + strlen (ops), sizeof (ops) - strlen (ops), "%s%s", k ? ", " : "", name);
    }
    ck_assert_int_eq (PROTO_NOPS, 10);
    struct proto_request r;
    berth_error_t err;
    const char *line = "{\"op\":\"nope\",\"id\":1}";
    ck_assert_int_eq (proto_decode_request (line, strlen (line), &r, &err), -1);
    ck_assert_msg (strstr (err.text, ops), "%s", err.text);
    proto_request_free (&r);
}
END_TEST

/* ---- a step's outcome on release and in the released event ------------ */

START_TEST (test_release_outcome)
{
    struct proto_request r, back;
    berth_error_t e;
    /* without one, as old clients send it */
    ck_assert_int_eq (decode ("{\"op\":\"release\",\"id\":1,\"lease\":\"L1\"}", &r, &e), 0);
    ck_assert_ptr_null (r.release.outcome);
    proto_request_free (&r);
    ck_assert_int_eq (decode ("{\"op\":\"release\",\"id\":2,\"lease\":\"L1\",\"outcome\":"
                              "{\"status\":137,\"signal\":9,\"stopped\":\"time-limit\","
                              "\"wall_s\":1.5,\"cpu_s\":0.25,\"max_rss_kb\":2048}}", &r, &e), 0);
    ck_assert_ptr_nonnull (r.release.outcome);
    ck_assert_int_eq (r.release.outcome->status, 137);
    ck_assert_int_eq (r.release.outcome->signal, 9);
    ck_assert_str_eq (r.release.outcome->stopped, "time-limit");
    ck_assert_int_eq (r.release.outcome->max_rss_kb, 2048);
    ck_assert (proto_outcome_failed (r.release.outcome));
    roundtrip (&r, &back);
    ck_assert_int_eq (back.release.outcome->status, 137);
    ck_assert_str_eq (back.release.outcome->stopped, "time-limit");
    proto_request_free (&back);
    proto_request_free (&r);
    /* strict: an unknown member, a bad status, an unknown reason, no status */
    const char *bad[] = {
        "{\"op\":\"release\",\"id\":3,\"lease\":\"L1\",\"outcome\":{\"status\":0,\"exit\":1}}",
        "{\"op\":\"release\",\"id\":3,\"lease\":\"L1\",\"outcome\":{\"status\":256}}",
        "{\"op\":\"release\",\"id\":3,\"lease\":\"L1\",\"outcome\":{\"status\":1,\"stopped\":\"bored\"}}",
        "{\"op\":\"release\",\"id\":3,\"lease\":\"L1\",\"outcome\":{\"signal\":9}}",
        "{\"op\":\"release\",\"id\":3,\"lease\":\"L1\",\"outcome\":3}",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        ck_assert_int_eq (decode (bad[i], &r, &e), -1);
        ck_assert_str_eq (e.code, PROTO_ERR_INVALID_REQUEST);
        ck_assert_ptr_nonnull (strstr (e.text, "outcome"));
        proto_request_free (&r);
    }
    /* the event: read leniently (a later berthd may add members) */
    struct proto_event ev;
    json_t *m = json_loads ("{\"event\":\"released\",\"time\":1,\"lease\":\"L1\","
                            "\"reason\":\"released\",\"outcome\":{\"status\":127,"
                            "\"launch_error\":\"not found\",\"later\":1}}", 0, NULL);
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_int_eq (ev.outcome->status, 127);
    ck_assert_str_eq (ev.outcome->launch_error, "not found");
    proto_event_free (&ev);
    json_decref (m);
    m = json_loads ("{\"event\":\"released\",\"time\":1,\"lease\":\"L1\"}", 0, NULL);
    ck_assert_int_eq (proto_decode_event (m, &ev, &e), 0);
    ck_assert_ptr_null (ev.outcome);
    proto_event_free (&ev);
    json_decref (m);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("codec");
    TCase *tc = tcase_create ("codec");
    tcase_add_loop_test (tc, test_malformed, 0, (int) (sizeof (bad_cases) / sizeof (bad_cases[0])));
    tcase_add_loop_test (tc, test_count_fields, 0,
                         (int) (sizeof (count_fields) / sizeof (count_fields[0])));
    tcase_add_test (tc, test_bool_fields);
    tcase_add_test (tc, test_too_large);
    tcase_add_test (tc, test_nul_bytes);
    tcase_add_test (tc, test_deep_nesting);
    tcase_add_test (tc, test_acquire_defaults);
    tcase_add_test (tc, test_acquire_common_members);
    tcase_add_test (tc, test_roundtrip_acquire);
    tcase_add_test (tc, test_roundtrip_render);
    tcase_add_test (tc, test_roundtrip_small_ops);
    tcase_add_test (tc, test_encode_request_refuses);
    tcase_add_test (tc, test_hello_reply);
    tcase_add_test (tc, test_acquire_reply);
    tcase_add_test (tc, test_lease_encode_refuses);
    tcase_add_test (tc, test_lease_decode_errors);
    tcase_add_test (tc, test_other_replies);
    tcase_add_test (tc, test_error_replies);
    tcase_add_test (tc, test_parse_message_errors);
    tcase_add_test (tc, test_events);
    tcase_add_test (tc, test_line_framing);
    tcase_add_test (tc, test_op_table);
    tcase_add_test (tc, test_release_outcome);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
