/* SPDX-License-Identifier: MIT */
/* The fast lane of request decoding against the jansson path: every line is
 * decoded both ways, and the fast lane either declines it (touching
 * nothing) or yields exactly what the jansson path yields; it never accepts
 * a line the jansson path refuses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "mutate.h"
#include "request_fast.h"
#include "testutil.h"

enum outcome { DECLINED, AGREED };

/* Decode line both ways; assert the fast lane's contract; say which. */
static enum outcome both_n (const char *line, size_t len)
{
    struct proto_request fast, slow, pristine;
    berth_error_t err;
    char why[128];

    memset (&fast, 0xa5, sizeof (fast));
    memcpy (&pristine, &fast, sizeof (fast));
    int rf = proto_decode_request_fast (line, len, &fast);
    int rs = proto_decode_request_jansson (line, len, &slow, &err);
    if (rf == 1) {
        ck_assert_msg (!memcmp (&fast, &pristine, sizeof (fast)),
                       "a declined line touched the request: %.*s", (int) len, line);
        proto_request_free (&slow);
        return DECLINED;
    }
    ck_assert_msg (rf == 0, "fast lane returned %d for %.*s", rf, (int) len, line);
    ck_assert_msg (rs == 0, "fast lane accepted what jansson refuses (%s): %.*s",
                   err.text, (int) len, line);
    ck_assert_msg (proto_request_same (&fast, &slow, why, sizeof (why)), "%s: %.*s",
                   why, (int) len, line);
    /* the public entry gives the same */
    struct proto_request pub;
    ck_assert_int_eq (proto_decode_request (line, len, &pub, &err), 0);
    ck_assert (proto_request_same (&pub, &slow, NULL, 0));
    proto_request_free (&pub);
    proto_request_free (&fast);
    proto_request_free (&slow);
    return AGREED;
}

static enum outcome both (const char *line)
{
    return both_n (line, strlen (line));
}

/* Lines the fast lane must take (plain acquires and releases). */
static const char *const plain[] = {
    "{\"op\":\"acquire\",\"id\":109,\"cores\":1}\n",
    "{\"op\":\"release\",\"id\":110,\"lease\":\"L17\"}\n",
    "{\"id\":\"req-1\",\"op\":\"release\",\"lease\":\"L1\"}",
    " { \"op\" : \"acquire\" , \"id\" : 0 , \"ntasks\" : 4 , \"cpus_per_task\" : 2 } \r\n",
    "{\"op\":\"acquire\",\"id\":-7,\"ntasks\":1048576,\"cpus_per_task\":1048576}",
    "{\"op\":\"acquire\",\"id\":\"\",\"cores\":3,\"gpus\":0,\"memory\":1099511627776}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":2,\"label\":\"train ~!@#$%^&*()\",\"env\":true,"
    "\"local\":false,\"argv\":[\"python\",\"\",\"-c\",\"print(1)\"]}",
    "{\"op\":\"acquire\",\"id\":2,\"ntasks\":2,\"min_tasks\":1,\"cpus_per_task\":4,"
    "\"min_cpus_per_task\":2,\"min_cores\":1,\"gpus\":4,\"min_gpus\":0,"
    "\"gpus_per_task\":1,\"min_gpus_per_task\":0,\"min_memory\":1,"
    "\"may_span_nodes\":false,\"priority\":-1048576,\"timeout\":30.5,\"wait\":false}",
    "{\"op\":\"acquire\",\"id\":3,\"cores\":1,\"detach\":true,\"ttl\":3600,"
    "\"owner_pid\":4194304,\"duration\":0.25,\"priority\":1048576}",
    "{\"op\":\"acquire\",\"id\":4,\"cores\":1,\"detach\":true,\"ttl\":0,\"timeout\":0,"
    "\"duration\":31622400}",
    "{\"op\":\"acquire\",\"id\":5,\"cores\":1,\"timeout\":31622400.0,\"ttl\":null,"
    "\"owner_pid\":null,\"label\":null,\"argv\":null,\"wait\":null,\"may_span_nodes\":true}",
    "{\"op\":\"acquire\",\"id\":6,\"cores\":null,\"ntasks\":null,\"memory\":null,"
    "\"detach\":false,\"env\":false,\"local\":true}",
    "{\"op\":\"acquire\",\"id\":999999999999999999,\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":-999999999999999999,\"cores\":1,\"timeout\":-0.0}",
    "{\"op\":\"acquire\",\"id\":7,\"cores\":1,\"timeout\":0.1,\"duration\":123.456789}",
    "{\"op\":\"acquire\",\"id\":8}",
    "{\"op\":\"release\",\"id\":9,\"lease\":\"x\"}\n",
};

START_TEST (test_plain_lines_take_the_fast_lane)
{
    for (size_t i = 0; i < sizeof (plain) / sizeof (plain[0]); i++)
        ck_assert_msg (both (plain[i]) == AGREED, "declined: %s", plain[i]);
}
END_TEST

START_TEST (test_fields_read_as_the_jansson_path_reads_them)
{
    struct proto_request r;
    const char *line = plain[7];
    ck_assert_int_eq (proto_decode_request_fast (line, strlen (line), &r), 0);
    ck_assert_int_eq (r.op, PROTO_ACQUIRE);
    ck_assert (json_is_integer (r.id) && json_integer_value (r.id) == 2);
    ck_assert_int_eq (r.acquire.step.gpus, 4);
    ck_assert_int_eq (r.acquire.step.may_span_nodes, 0);
    ck_assert_int_eq (r.acquire.step.priority, -1048576);
    ck_assert (r.acquire.step.timeout == 30.5);
    ck_assert (!r.acquire.wait);
    ck_assert (r.acquire.ttl < 0 && r.acquire.duration < 0);
    proto_request_free (&r);

    line = plain[6];
    ck_assert_int_eq (proto_decode_request_fast (line, strlen (line), &r), 0);
    ck_assert_str_eq (r.acquire.step.label, "train ~!@#$%^&*()");
    ck_assert_str_eq (r.acquire.step.argv[3], "print(1)");
    ck_assert_str_eq (r.acquire.step.argv[1], "");
    ck_assert_ptr_null (r.acquire.step.argv[4]);
    ck_assert (r.acquire.env);
    proto_request_free (&r);

    line = plain[2];
    ck_assert_int_eq (proto_decode_request_fast (line, strlen (line), &r), 0);
    ck_assert_int_eq (r.op, PROTO_RELEASE);
    ck_assert_str_eq (json_string_value (r.id), "req-1");
    ck_assert_str_eq (r.release.lease, "L1");
    proto_request_free (&r);
}
END_TEST

/* Lines the fast lane declines: other ops, members or forms it does not
 * take, and everything the jansson path refuses. */
static const char *const declined[] = {
    /* other ops, unknown members */
    "{\"op\":\"hello\",\"id\":1,\"version\":1}",
    "{\"op\":\"status\",\"id\":1}",
    "{\"op\":\"reclaim\",\"id\":1,\"lease\":\"L1\"}",
    "{\"op\":\"acquire\",\"id\":1,\"lease\":\"L1\"}",
    "{\"op\":\"release\",\"id\":1,\"lease\":\"L1\",\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":1,\"colour\":\"red\"}",
    "{\"op\":\"Acquire\",\"id\":1}",
    "{\"op\":\"acquirex\",\"id\":1}",
    /* strings and numbers the scanner leaves to jansson */
    "{\"op\":\"acquire\",\"id\":1,\"label\":\"a\\u0062\"}",
    "{\"op\":\"acquire\",\"id\":1,\"label\":\"a\\\"b\"}",
    "{\"op\":\"acquire\",\"id\":1,\"label\":\"caf\xc3\xa9\"}",
    "{\"op\":\"acqu\\u0069re\",\"id\":1}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":1e3}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":1.5E1}",
    "{\"op\":\"acquire\",\"id\":1234567890123456789,\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":12345678901234567890,\"cores\":1}",
    /* what the jansson path refuses */
    "{\"op\":\"acquire\",\"id\":1,\"cores\":1,\"cores\":2}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":1}x",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":1}{}",
    "{\"op\":\"release\" \"id\":1,\"lease\":\"L1\"}",
    "{\"op\":\"release\",\"id\":1,\"lease\":\"L1\",}",
    "{\"op\":\"release\",,\"id\":1,\"lease\":\"L1\"}",
    "{\"op\":\"release\",\"id\":1,\"lease\":\"L1\"",
    "{\"op\":\"release\",\"id\":1:\"lease\":\"L1\"}",
    "{'op':'release','id':1,'lease':'L1'}",
    "{\"op\":\"acquire\",\"id\":01,\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":+1}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":.5}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":5.}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":-}",
    "{\"op\":\"acquire\",\"id\":1,\"wait\":tru}",
    "{\"op\":\"acquire\",\"id\":1,\"wait\":True}",
    "{\"op\":\"acquire\",\"id\":1,\"wait\":nul}",
    "{\"op\":\"acquire\",\"id\":1,\"label\":\"tab\there\"}",
    "[{\"op\":\"release\",\"id\":1,\"lease\":\"L1\"}]",
    "\"release\"",
    "42",
    "",
    "\n",
    "{}",
    "{\"op\":\"acquire\"}",
    "{\"op\":\"release\",\"id\":1}",
    "{\"op\":\"release\",\"id\":1,\"lease\":null}",
    "{\"op\":\"release\",\"id\":1,\"lease\":\"\"}",
    "{\"op\":\"release\",\"id\":1,\"lease\":17}",
    "{\"op\":null,\"id\":1}",
    "{\"op\":1,\"id\":1}",
    "{\"op\":\"acquire\",\"id\":null,\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":1.5,\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":true,\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":[1],\"cores\":1}",
    "{\"op\":\"acquire\",\"id\":{\"a\":1},\"cores\":1}",
    /* values out of range or of the wrong type */
    "{\"op\":\"acquire\",\"id\":1,\"cores\":0}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":1048577}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":1.0}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":\"1\"}",
    "{\"op\":\"acquire\",\"id\":1,\"gpus\":-1}",
    "{\"op\":\"acquire\",\"id\":1,\"ntasks\":0}",
    "{\"op\":\"acquire\",\"id\":1,\"memory\":0}",
    "{\"op\":\"acquire\",\"id\":1,\"memory\":1099511627777}",
    "{\"op\":\"acquire\",\"id\":1,\"priority\":1048577}",
    "{\"op\":\"acquire\",\"id\":1,\"priority\":-1048577}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":-1}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":-0.5}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":31622400.5}",
    "{\"op\":\"acquire\",\"id\":1,\"timeout\":\"30\"}",
    "{\"op\":\"acquire\",\"id\":1,\"wait\":1}",
    "{\"op\":\"acquire\",\"id\":1,\"local\":\"true\"}",
    "{\"op\":\"acquire\",\"id\":1,\"label\":\"\"}",
    "{\"op\":\"acquire\",\"id\":1,\"label\":7}",
    "{\"op\":\"acquire\",\"id\":1,\"label\":[\"a\"]}",
    "{\"op\":\"acquire\",\"id\":1,\"argv\":[]}",
    "{\"op\":\"acquire\",\"id\":1,\"argv\":[\"\"]}",
    "{\"op\":\"acquire\",\"id\":1,\"argv\":[\"a\",1]}",
    "{\"op\":\"acquire\",\"id\":1,\"argv\":[\"a\",null]}",
    "{\"op\":\"acquire\",\"id\":1,\"argv\":[\"a\",[\"b\"]]}",
    "{\"op\":\"acquire\",\"id\":1,\"argv\":\"a\"}",
    "{\"op\":\"acquire\",\"id\":1,\"argv\":{\"a\":\"b\"}}",
    "{\"op\":\"acquire\",\"id\":1,\"ttl\":60}",
    "{\"op\":\"acquire\",\"id\":1,\"ttl\":0,\"detach\":false}",
    "{\"op\":\"acquire\",\"id\":1,\"owner_pid\":12}",
    "{\"op\":\"acquire\",\"id\":1,\"owner_pid\":0,\"detach\":true}",
    "{\"op\":\"acquire\",\"id\":1,\"owner_pid\":4194305,\"detach\":true}",
    "{\"op\":\"acquire\",\"id\":1,\"duration\":-1}",
    "{\"op\":\"acquire\",\"id\":1,\"may_span_nodes\":0}",
    "{\"op\":\"acquire\",\"id\":1,\"cores\":{\"n\":[1,{\"x\":null}]}}",
};

START_TEST (test_other_lines_are_declined)
{
    for (size_t i = 0; i < sizeof (declined) / sizeof (declined[0]); i++)
        ck_assert_msg (both (declined[i]) == DECLINED, "taken: %s", declined[i]);
}
END_TEST

START_TEST (test_odd_bytes_are_declined)
{
    /* a NUL inside a string, and a line over the limit */
    static const char nul[] = "{\"op\":\"release\",\"id\":1,\"lease\":\"L\0x\"}";
    ck_assert_int_eq (both_n (nul, sizeof (nul) - 1), DECLINED);
    static const char idnul[] = "{\"op\":\"release\",\"id\":\"a\0b\",\"lease\":\"L1\"}";
    ck_assert_int_eq (both_n (idnul, sizeof (idnul) - 1), DECLINED);

    size_t n = PROTO_MAX_LINE + 2;
    char *big = malloc (n);
    ck_assert_ptr_nonnull (big);
    const char *head = "{\"op\":\"release\",\"id\":1,\"lease\":\"L1\"}";
    memset (big, ' ', n);
    memcpy (big, head, strlen (head));
    ck_assert_int_eq (both_n (big, n), DECLINED);
    berth_error_t err;
    struct proto_request r;
    ck_assert_int_eq (proto_decode_request (big, n, &r, &err), -1);
    ck_assert_str_eq (err.code, PROTO_ERR_TOO_LARGE);
    proto_request_free (&r);
    free (big);

    /* a string id of 255 bytes is usable, of 256 is not */
    char line[600];
    char id[257];
    memset (id, 'i', sizeof (id));
    id[255] = '\0';
    snprintf (line, sizeof (line), "{\"op\":\"release\",\"id\":\"%s\",\"lease\":\"L1\"}", id);
    ck_assert_int_eq (both (line), AGREED);
    id[255] = 'i';
    id[256] = '\0';
    snprintf (line, sizeof (line), "{\"op\":\"release\",\"id\":\"%s\",\"lease\":\"L1\"}", id);
    ck_assert_int_eq (both (line), DECLINED);
    /* and a label of 255 bytes is taken, of 256 refused */
    id[255] = '\0';
    snprintf (line, sizeof (line), "{\"op\":\"acquire\",\"id\":1,\"label\":\"%s\"}", id);
    ck_assert_int_eq (both (line), AGREED);
    id[255] = 'i';
    snprintf (line, sizeof (line), "{\"op\":\"acquire\",\"id\":1,\"label\":\"%s\"}", id);
    ck_assert_int_eq (both (line), DECLINED);
}
END_TEST

/* The refusals are the jansson path's, worded as before. */
START_TEST (test_refusals_keep_their_words)
{
    static const struct { const char *line, *says; } cases[] = {
        { "{\"op\":\"acquire\",\"id\":1,\"ttl\":60}", "applies to detached leases only" },
        { "{\"op\":\"acquire\",\"id\":1,\"cores\":0}", "field 'cores' must be a positive integer" },
        { "{\"op\":\"release\",\"id\":1}", "lease" },
        { "{\"op\":\"release\" \"id\":1}", "not valid JSON" },
        { "{\"op\":\"acquire\",\"id\":1,\"argv\":[\"\"]}", "argv[0]" },
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        struct proto_request r;
        berth_error_t err;
        ck_assert_int_eq (proto_decode_request (cases[i].line, strlen (cases[i].line),
                                                &r, &err), -1);
        ck_assert_msg (strstr (err.text, cases[i].says), "%s: %s", cases[i].line, err.text);
        ck_assert_str_eq (err.code, PROTO_ERR_INVALID_REQUEST);
        proto_request_free (&r);
    }
}
END_TEST

/* Random byte edits of plain lines: the fast lane declines, or agrees. */
START_TEST (test_mutations_never_disagree)
{
    static const char alphabet[] = "{}[]\":,.-+0123456789eE \t\n\\ulnatrsfx\x01\x7f\xc3";
    uint64_t state = 0x9e3779b97f4a7c15ull;
    int agreed = 0, declined_n = 0;
    char line[512];

    for (int round = 0; round < 6000; round++) {
        const char *base = plain[(size_t) round % (sizeof (plain) / sizeof (plain[0]))];
        size_t n = strlen (base);
        memcpy (line, base, n);
        n = mutate_line (line, n, sizeof (line), 1 + round % 3, alphabet, &state);
        if (both_n (line, n) == AGREED)
            agreed++;
        else
            declined_n++;
    }
    /* both kinds happen, or the loop tests nothing */
    ck_assert_int_gt (agreed, 100);
    ck_assert_int_gt (declined_n, 100);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("request_fast");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_plain_lines_take_the_fast_lane);
    tcase_add_test (tc, test_fields_read_as_the_jansson_path_reads_them);
    tcase_add_test (tc, test_other_lines_are_declined);
    tcase_add_test (tc, test_odd_bytes_are_declined);
    tcase_add_test (tc, test_refusals_keep_their_words);
    tcase_add_test (tc, test_mutations_never_disagree);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
