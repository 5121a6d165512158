/* SPDX-License-Identifier: MIT */
/* The placed op (PROTOCOL.md): {"op":"placed","id":..,"lease":"L5",
 * "cores":[1],"gpu_ids":[0]} is how a local step that srun placed tells
 * berthd the cores and GPUs it really got. Decoding, encoding, the round
 * trip, and every refusal naming the field. */
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
    ck_assert_int_eq (decode ("{\"op\":\"placed\",\"id\":4,\"lease\":\"L5\",\"cores\":[3,1]}",
                              &r, &e), 0);
    ck_assert_int_eq (r.op, PROTO_PLACED);
    ck_assert_str_eq (proto_op_name (r.op), "placed");
    ck_assert_str_eq (r.placed.lease, "L5");
    ck_assert_int_eq (r.placed.ncores, 2);
    ck_assert_int_eq (r.placed.cores[0], 3);
    ck_assert_int_eq (r.placed.cores[1], 1);
    ck_assert_int_eq (r.placed.ngpu_ids, -1);     /* not stated */
    proto_request_free (&r);
    ck_assert_int_eq (decode ("{\"op\":\"placed\",\"id\":4,\"lease\":\"L5\",\"cores\":[0],"
                              "\"gpu_ids\":[]}", &r, &e), 0);
    ck_assert_int_eq (r.placed.ngpu_ids, 0);
    proto_request_free (&r);
    ck_assert_int_eq (decode ("{\"op\":\"placed\",\"id\":4,\"lease\":\"L5\",\"cores\":[0],"
                              "\"gpu_ids\":[2,0]}", &r, &e), 0);
    ck_assert_int_eq (r.placed.ngpu_ids, 2);
    ck_assert_int_eq (r.placed.gpu_ids[0], 2);
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
    refused ("{\"op\":\"placed\",\"id\":1,\"cores\":[0]}", "placed: missing required field 'lease'");
    refused ("{\"op\":\"placed\",\"id\":1,\"lease\":\"L5\"}", "placed: missing required field 'cores'");
    refused ("{\"op\":\"placed\",\"id\":1,\"lease\":\"L5\",\"cores\":[]}", "placed: field 'cores'");
    refused ("{\"op\":\"placed\",\"id\":1,\"lease\":\"L5\",\"cores\":[-1]}", "placed: field 'cores[0]'");
    refused ("{\"op\":\"placed\",\"id\":1,\"lease\":\"L5\",\"cores\":\"0\"}", "placed: field 'cores'");
    refused ("{\"op\":\"placed\",\"id\":1,\"lease\":\"L5\",\"cores\":[0],\"gpu_ids\":[\"a\"]}",
             "placed: field 'gpu_ids[0]'");
    refused ("{\"op\":\"placed\",\"id\":1,\"lease\":\"L5\",\"cores\":[0],\"gpus\":1}",
             "placed: unknown field(s): gpus");
    refused ("{\"op\":\"placedd\",\"id\":1}", "reclaim, placed");
}
END_TEST

START_TEST (test_roundtrip)
{
    struct proto_request in, out;
    berth_error_t e;
    int cores[] = { 4, 5 }, gpus[] = { 1 };
    proto_request_init (&in, PROTO_PLACED);
    in.id = json_integer (9);
    ck_assert_ptr_null (proto_encode_request (&in));    /* no lease: refused */
    in.placed.lease = "L17";
    ck_assert_ptr_null (proto_encode_request (&in));    /* no cores: refused */
    in.placed.cores = cores;
    in.placed.ncores = 2;
    for (int with_gpus = 0; with_gpus < 2; with_gpus++) {
        if (with_gpus) {
            in.placed.gpu_ids = gpus;
            in.placed.ngpu_ids = 1;
        }
        json_t *o = proto_encode_request (&in);
        ck_assert_ptr_nonnull (o);
        ck_assert_int_eq (json_object_get (o, "gpu_ids") != NULL, with_gpus);
        char *line = proto_line (o);
        ck_assert_int_eq (proto_decode_request (line, strlen (line), &out, &e), 0);
        ck_assert_int_eq (out.op, PROTO_PLACED);
        ck_assert_str_eq (out.placed.lease, "L17");
        ck_assert_int_eq (out.placed.ncores, 2);
        ck_assert_int_eq (out.placed.cores[1], 5);
        ck_assert_int_eq (out.placed.ngpu_ids, with_gpus ? 1 : -1);
        if (with_gpus)
            ck_assert_int_eq (out.placed.gpu_ids[0], 1);
        free (line);
        json_decref (o);
        proto_request_free (&out);
    }
    json_decref (in.id);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("codec_placed");
    TCase *tc = tcase_create ("placed");
    tcase_add_test (tc, test_decode);
    tcase_add_test (tc, test_refusals);
    tcase_add_test (tc, test_roundtrip);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
