/* SPDX-License-Identifier: MIT */
/* libberth's public error codes (berth.h) are the protocol's (codec.h): each
 * BERTH_ERR_* of berthd's codes equals its PROTO_ERR_*, a refusal berthd
 * sends reads as that public code, and the client side's own codes are none
 * of berthd's. */
#include <string.h>

#include "libberth_private.h"
#include "testutil.h"

START_TEST (public_codes_are_the_protocols)
{
    int n = 0;
#define SAME(name)                                                  \
    ck_assert_str_eq (BERTH_ERR_##name, PROTO_ERR_##name);          \
    ck_assert_ptr_nonnull (proto_error_code (BERTH_ERR_##name));   \
    ck_assert_str_eq (proto_error_code (BERTH_ERR_##name), PROTO_ERR_##name); \
    n++;
    PROTO_ERROR_NAMES (SAME)
#undef SAME
    ck_assert_int_eq (n, 10);
}
END_TEST

/* A refusal with each code reads as the public constant a program compares. */
START_TEST (refusals_read_as_public_codes)
{
    const char *codes[] = {
#define CODE(name) BERTH_ERR_##name,
        PROTO_ERROR_NAMES (CODE)
#undef CODE
    };
    for (size_t i = 0; i < sizeof (codes) / sizeof (codes[0]); i++) {
        char line[256];
        json_t *msg;
        berth_error_t err;
        snprintf (line, sizeof (line),
                  "{\"id\":1,\"ok\":false,\"error\":{\"code\":\"%s\",\"message\":\"why\"}}",
                  codes[i]);
        ck_assert_int_eq (proto_parse_message (line, strlen (line), &msg, &err), 0);
        ck_assert_int_eq (proto_reply_status (msg, &err), -1);
        ck_assert_str_eq (err.code, codes[i]);
        ck_assert_str_eq (err.text, "why");
        json_decref (msg);
    }
}
END_TEST

START_TEST (client_codes_are_not_berthds)
{
    const char *own[] = { BERTH_ERR_CONNECT, BERTH_ERR_CLOSED, BERTH_ERR_PROTOCOL,
                          BERTH_ERR_USAGE, BERTH_ERR_SYSTEM, "error" };
    for (size_t i = 0; i < sizeof (own) / sizeof (own[0]); i++)
        ck_assert_ptr_null (proto_error_code (own[i]));
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("error_codes");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, public_codes_are_the_protocols);
    tcase_add_test (tc, refusals_read_as_public_codes);
    tcase_add_test (tc, client_codes_are_not_berthds);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
