/* SPDX-License-Identifier: MIT */
/* The reclaim op (PROTOCOL.md): {"op":"reclaim","id":..,"lease":"L5"} takes
 * back a connection-bound lease orphaned by a restart of berthd. Decoding,
 * encoding, the round trip, and every refusal naming the field. */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "testutil.h"

static int decode (const char *line, struct proto_request *r, berth_error_t *e)
{
    return proto_decode_request (line, strlen (line), r, e);
}

START_TEST (test_decode)
{
    struct proto_request r;
    berth_error_t e;
    ck_assert_int_eq (decode ("{\"op\":\"reclaim\",\"id\":4,\"lease\":\"L5\"}",
                              &r, &e), 0);
    ck_assert_int_eq (r.op, PROTO_RECLAIM);
    ck_assert_str_eq (r.reclaim.lease, "L5");
    ck_assert_int_eq (json_integer_value (r.id), 4);
    ck_assert_str_eq (proto_op_name (r.op), "reclaim");
    proto_request_free (&r);
}
END_TEST

static void refused (const char *line, const char *want)
{
    struct proto_request r;
    berth_error_t e;
    ck_assert_int_eq (decode (line, &r, &e), -1);
    ck_assert_str_eq (e.code, PROTO_ERR_INVALID_REQUEST);
    ck_assert_msg (strstr (e.text, want), "'%s' lacks '%s'", e.text, want);
    proto_request_free (&r);
}

START_TEST (test_refusals)
{
    refused ("{\"op\":\"reclaim\",\"id\":1}", "reclaim: missing required field 'lease'");
    refused ("{\"op\":\"reclaim\",\"id\":1,\"lease\":5}", "reclaim: field 'lease'");
    refused ("{\"op\":\"reclaim\",\"id\":1,\"lease\":\"L5\",\"detach\":true}",
             "reclaim: unknown field(s): detach");
    refused ("{\"op\":\"reclaim\",\"id\":1,\"lease\":\"\"}", "reclaim: field 'lease'");
    /* the list of known ops names it */
    refused ("{\"op\":\"reclaimm\",\"id\":1}", "shutdown, reclaim");
}
END_TEST

START_TEST (test_roundtrip)
{
    struct proto_request in, out;
    berth_error_t e;
    proto_request_init (&in, PROTO_RECLAIM);
    in.id = json_string ("r1");
    ck_assert_ptr_null (proto_encode_request (&in));    /* no lease: refused */
    in.reclaim.lease = strdup ("L17");
    json_t *o = proto_encode_request (&in);
    ck_assert_ptr_nonnull (o);
    char *line = proto_line (o);
    ck_assert_int_eq (proto_decode_request (line, strlen (line), &out, &e), 0);
    ck_assert_int_eq (out.op, PROTO_RECLAIM);
    ck_assert_str_eq (out.reclaim.lease, "L17");
    ck_assert (json_equal (out.id, in.id));
    free (line);
    json_decref (o);
    proto_request_free (&out);
    proto_request_free (&in);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("codec_reclaim");
    TCase *tc = tcase_create ("reclaim");
    tcase_add_test (tc, test_decode);
    tcase_add_test (tc, test_refusals);
    tcase_add_test (tc, test_roundtrip);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
