/* SPDX-License-Identifier: MIT */
/* The kept status reply (daemon/status_memo.c): a large reply built with a
 * null id is given back under another request's id while its key is the
 * same and it is young enough, and equals the reply built for that id; any
 * change of the key, an age past STATUS_MEMO_MAX_AGE, a small reply or one
 * of another form gives nothing. Time is a parameter here. */
#include <stdlib.h>
#include <string.h>

#include "status_memo.h"
#include "testutil.h"

/* A status-shaped reply of about size bytes, with id. */
static char *reply (json_t *id, size_t size, size_t *len)
{
    json_t *nodes = json_array ();
    for (size_t i = 0; i * 40 < size; i++)
        json_array_append_new (nodes, json_pack ("{s:i s:i}", "free", (int) i,
                                                 "held", 3));
    json_t *msg = json_pack ("{s:O s:b s:{s:o}}", "id", id, "ok", 1,
                             "allocation", "nodes", nodes);
    char *s = json_dumps (msg, JSON_COMPACT);
    json_decref (msg);
    size_t n = strlen (s);
    s = realloc (s, n + 2);
    s[n] = '\n';
    s[n + 1] = '\0';
    *len = n + 1;
    return s;
}

/* The kept reply as given for id, head and tail joined; NULL: none. */
static char *given (const struct status_memo *m, const struct status_key *key,
                    const json_t *id, double now, size_t *len)
{
    struct shared_text *tail = NULL;
    size_t n;
    char *head = status_memo_reply (m, key, id, now, &n, &tail);
    if (!head)
        return NULL;
    ck_assert_ptr_nonnull (tail);
    ck_assert_uint_eq (n, strlen (head));
    char *all = malloc (n + tail->len + 1);
    memcpy (all, head, n);
    memcpy (all + n, tail->data, tail->len + 1);
    *len = n + tail->len;
    free (head);
    shared_text_unref (tail);
    return all;
}

START_TEST (kept_and_given_back)
{
    struct status_memo m = { 0 };
    struct status_key key = { .changes = 3, .ledger = 9, .journal_bytes = 100,
                              .leases = 5, .job_end = -1 };
    size_t len, n, want_len;
    char *line = reply (json_null (), 2 * STATUS_MEMO_MIN_BYTES, &len);
    status_memo_keep (&m, &key, line, len, 10.0, 10.01);
    ck_assert_ptr_nonnull (m.body);
    json_t *ids[] = { json_integer (42), json_string ("req \"7\""), json_null () };
    for (int i = 0; i < 3; i++) {
        char *got = given (&m, &key, ids[i], 10.1, &n);
        char *want = reply (ids[i], 2 * STATUS_MEMO_MIN_BYTES, &want_len);
        ck_assert_ptr_nonnull (got);
        ck_assert_uint_eq (n, strlen (got));
        ck_assert_uint_eq (n, want_len);
        ck_assert_str_eq (got, want);
        free (got);
        free (want);
        json_decref (ids[i]);
    }
    /* the same splice for a reply that is not kept */
    json_t *five = json_integer (5);
    char *spliced = status_reply_with_id (line, len, five, &n);
    json_decref (five);
    ck_assert_ptr_nonnull (spliced);
    ck_assert_int_eq (strncmp (spliced, "{\"id\":5,\"ok\":true,", 18), 0);
    free (spliced);
    /* a reply that cost long to build is kept longer: twice that */
    status_memo_keep (&m, &key, line, len, 10.0, 11.0);
    char *late = given (&m, &key, NULL, 11.9, &n);
    ck_assert_ptr_nonnull (late);
    free (late);
    ck_assert_ptr_null (given (&m, &key, NULL, 12.1, &n));
    status_memo_keep (&m, &key, line, len, 10.0, 10.01);
    /* too old, or any part of the key moved: nothing */
    ck_assert_ptr_null (given (&m, &key, NULL, 10.0 + 2 * STATUS_MEMO_MAX_AGE, &n));
    ck_assert_ptr_null (given (&m, &key, NULL, 9.0, &n));
    struct status_key moved[10];
    for (int i = 0; i < 10; i++)
        moved[i] = key;
    moved[0].changes++;
    moved[1].ledger++;
    moved[2].journal_bytes++;
    moved[3].compactions++;
    moved[4].leases++;
    moved[5].waiting++;
    moved[6].draining = true;
    moved[7].held_since = 1.0;
    moved[8].job_end = 5.0;
    moved[9].failed++;
    for (int i = 0; i < 10; i++)
        ck_assert_msg (!given (&m, &moved[i], NULL, 10.1, &n),
                       "key member %d moved, yet the kept reply was given", i);
    /* a reply still queued keeps its text when the memo lets it go */
    struct shared_text *tail = NULL;
    char *head = status_memo_reply (&m, &key, NULL, 10.1, &n, &tail);
    ck_assert_ptr_nonnull (head);
    status_memo_keep (&m, &key, line, len, 10.0, 10.01);
    status_memo_clear (&m);
    ck_assert_ptr_null (given (&m, &key, NULL, 10.1, &n));
    ck_assert_uint_eq (tail->len + n, len);
    ck_assert_int_eq (memcmp (tail->data, line + strlen ("{\"id\":null"), tail->len), 0);
    free (head);
    shared_text_unref (tail);
    free (line);

    /* a small reply is not kept; nor one of another form */
    line = reply (json_null (), 100, &len);
    status_memo_keep (&m, &key, line, len, 10.0, 10.01);
    ck_assert_ptr_null (m.body);
    free (line);
    json_t *one = json_integer (1);
    line = reply (one, 2 * STATUS_MEMO_MIN_BYTES, &len);
    json_decref (one);
    status_memo_keep (&m, &key, line, len, 10.0, 10.01);
    ck_assert_ptr_null (m.body);
    ck_assert_ptr_null (status_reply_with_id (line, len, NULL, &n));
    free (line);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("status_memo");
    TCase *tc = tcase_create ("memo");
    tcase_add_test (tc, kept_and_given_back);
    suite_add_tcase (s, tc);
    return run_suite (s);
}
